import ATT
import BluetoothCore

// Primary service, relationship, characteristic and descriptor discovery (Core 5.4 Vol 3
// Part G 4.4 to 4.7). Every chain asks from where the last answer stopped to the range's
// end, so a response packs as many entries as the MTU allows and nothing is asked twice.
extension GATTClient {
    /// Discover All Primary Services (4.4.1): Read By Group Type 0x2800 over `range`.
    public func discoverAllPrimaryServices(
        in range: ClosedRange<UInt16> = 0x0001...0xFFFF
    ) async throws(GATTError) -> [GATTDatabase.Service] {
        var services: [GATTDatabase.Service] = []
        try await chain(range, name: "Discover All Primary Services") { (start, order) async throws(GATTError) -> Bool in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.readByGroupType(start...range.upperBound, type: GATTUUID.primaryService)
            }) else { return false }
            for entry in response.attributeDataList {
                let handles = try order.take(entry.attributeHandle, through: entry.endGroupHandle, "service")
                services.append(.init(uuid: try decodeUUID(entry.attributeValue, at: entry.attributeHandle), handles: handles))
            }
            return true
        }
        return services
    }

    /// Discover Primary Service by Service UUID (4.4.2): Find By Type Value 0x2800.
    public func discoverPrimaryServices(
        uuid: BluetoothUUID, in range: ClosedRange<UInt16> = 0x0001...0xFFFF
    ) async throws(GATTError) -> [GATTDatabase.Service] {
        let value = uuid.attributeBytes
        var services: [GATTDatabase.Service] = []
        try await chain(range, name: "Discover Primary Service by Service UUID") { (start, order) async throws(GATTError) -> Bool in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.findByTypeValue(start...range.upperBound, type: 0x2800, value: value)
            }) else { return false }
            for entry in response.handlesInformationList {
                services.append(.init(uuid: uuid, handles: try order.take(entry.foundAttributeHandle, through: entry.groupEndHandle, "service")))
            }
            return true
        }
        return services
    }

    /// Find Included Services (4.5.1): Read By Type 0x2802 over `range`. An include that
    /// carries no UUID names a 128-bit service, whose UUID is read from its declaration.
    public func findIncludedServices(in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.IncludedService] {
        var includes: [GATTDatabase.IncludedService] = []
        try await chain(range, name: "Find Included Services") { (start, order) async throws(GATTError) -> Bool in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.readByType(start...range.upperBound, type: GATTUUID.include)
            }) else { return false }
            for entry in response.attributeDataList {
                let handle = try order.take(entry.attributeHandle, through: entry.attributeHandle, "include declaration").lowerBound
                var reader = ByteReader(entry.attributeValue)
                guard let first = try? reader.readUInt16(), let end = try? reader.readUInt16(), first <= end, first > 0,
                      entry.attributeValue.count == 4 || entry.attributeValue.count == 6
                else { throw .invalidResponse("include declaration at 0x\(hex16(handle)) does not decode") }
                let uuid: BluetoothUUID
                if entry.attributeValue.count == 6 {
                    uuid = try decodeUUID(Array(entry.attributeValue[4...]), at: handle)
                } else {
                    let declaration = try await request { () async throws(ATTError) in try await att.read(first) }
                    guard declaration.attributeValue.count == 16 else {
                        throw .invalidResponse("service declaration at 0x\(hex16(first)) has no 128-bit UUID")
                    }
                    uuid = try decodeUUID(declaration.attributeValue, at: first)
                }
                includes.append(.init(handle: handle, serviceHandles: first...end, uuid: uuid))
            }
            return true
        }
        return includes
    }

    /// Discover All Characteristics of a Service (4.6.1): Read By Type 0x2803 over
    /// `range`. End handles are left at `range`'s end; ``discoverServices(in:)`` sets them.
    public func discoverAllCharacteristics(in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.Characteristic] {
        var characteristics: [GATTDatabase.Characteristic] = []
        try await chain(range, name: "Discover All Characteristics of a Service") { (start, order) async throws(GATTError) -> Bool in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.readByType(start...range.upperBound, type: GATTUUID.characteristicDeclaration)
            }) else { return false }
            for entry in response.attributeDataList {
                let declaration: CharacteristicDeclaration
                do { declaration = try CharacteristicDeclaration(bytes: entry.attributeValue) } catch {
                    throw .invalidResponse("characteristic declaration at 0x\(hex16(entry.attributeHandle)): \(error)")
                }
                // Asking on after the value saves a request when a value ends the range.
                try order.takeCharacteristic(entry.attributeHandle, valueHandle: declaration.valueHandle)
                characteristics.append(.init(
                    handle: entry.attributeHandle, properties: declaration.properties, valueHandle: declaration.valueHandle,
                    uuid: declaration.uuid, endHandle: range.upperBound))
            }
            return true
        }
        for index in characteristics.indices.dropLast() {
            // Ascending, each after the previous value: never below the value, never 0 - 1.
            characteristics[index].endHandle = characteristics[index + 1].handle - 1
        }
        return characteristics
    }

    /// Discover Characteristics by UUID (4.6.2): all characteristics in `range`, of which
    /// those with `uuid` are kept (the specification's procedure; ATT cannot filter a
    /// declaration's value).
    public func discoverCharacteristics(uuid: BluetoothUUID, in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.Characteristic] {
        try await discoverAllCharacteristics(in: range).filter { $0.uuid == uuid }
    }

    /// Discover All Characteristic Descriptors (4.7.1): Find Information between the value
    /// and the characteristic's end. Nothing is sent when there is no room for one.
    public func discoverAllDescriptors(of characteristic: GATTDatabase.Characteristic) async throws(GATTError) -> [GATTDatabase.Descriptor] {
        guard characteristic.valueHandle < characteristic.endHandle else { return [] }
        let range = (characteristic.valueHandle + 1)...characteristic.endHandle
        var descriptors: [GATTDatabase.Descriptor] = []
        try await chain(range, name: "Discover All Characteristic Descriptors") { (start, order) async throws(GATTError) -> Bool in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.findInformation(start...range.upperBound)
            }) else { return false }
            for entry in response.informationData {
                try order.takeDescriptor(entry.handle, type: entry.type, of: characteristic.handle)
                descriptors.append(.init(handle: entry.handle, uuid: entry.type))
            }
            return true
        }
        return descriptors
    }

    /// Every service in `range` with its includes, characteristics and descriptors.
    /// Includes and characteristics are asked for over the span of all services at once;
    /// what comes back is checked against the rules of DiscoveryRules.swift.
    public func discoverServices(in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.Service] {
        try await procedure("Discovery of the services in 0x\(hex16(range.lowerBound))...0x\(hex16(range.upperBound))") { () async throws(GATTError) in
            try await discoverServicesWithin(range)
        }
    }

    private func discoverServicesWithin(_ range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.Service] {
        let primaries = try await discoverAllPrimaryServices(in: range)
        // Ascending and disjoint, so the span runs from the first start to the last end.
        guard let first = primaries.first, let last = primaries.last else { return [] }
        let includes = try await findIncludedServices(in: first.handles.lowerBound...last.handles.upperBound)
        let assembled = try GATTDatabase.assemble(primaries: primaries, includes: includes)
        // Ascending and disjoint too, with the secondaries among them.
        guard let lowest = assembled.first, let highest = assembled.last else { return [] }
        let whole = lowest.handles.lowerBound...highest.handles.upperBound
        var services = try GATTDatabase.place(try await discoverAllCharacteristics(in: whole), in: assembled)
        for index in services.indices {
            for position in services[index].characteristics.indices {
                services[index].characteristics[position].descriptors = try await discoverAllDescriptors(of: services[index].characteristics[position])
            }
        }
        return services
    }

    // MARK: Chains

    /// Runs `step` from `range`'s start; each step takes the entries of one answer through
    /// `order` (which throws for any that breaks the ordering rule) and returns false at
    /// Attribute Not Found. The next step asks from the handle after the last one taken,
    /// until the range's end; since every answer holds an entry and every entry lies after
    /// the ones before, a chain always advances.
    func chain(
        _ range: ClosedRange<UInt16>, name: String,
        _ step: (UInt16, inout DiscoveredHandles) async throws(GATTError) -> Bool
    ) async throws(GATTError) {
        guard range.lowerBound > 0 else {
            throw .invalidRequest("\(name) from handle 0x0000: handles start at 0x0001 (0x0000 is reserved, Vol 3 Part F 3.2.2)")
        }
        try await procedure(name) { () async throws(GATTError) in
            var order = DiscoveredHandles(procedure: name, range: range)
            var start = range.lowerBound
            while try await step(start, &order) {
                guard let last = order.last else { throw .invalidResponse("\(name) got an answer with no entry at 0x\(hex16(start))") }
                if last >= range.upperBound { return }
                start = last + 1
            }
        }
    }

    /// The response, or nil for the Attribute Not Found that ends a chain.
    func notFoundIsEnd<T>(_ body: () async throws(ATTError) -> T) async throws(GATTError) -> T? {
        do { return try await body() } catch {
            if error.isAttributeNotFound { return nil }
            throw .att(error)
        }
    }

    func decodeUUID(_ bytes: [UInt8], at handle: UInt16) throws(GATTError) -> BluetoothUUID {
        guard bytes.count == 2 || bytes.count == 16 else {
            throw .invalidResponse("the UUID at 0x\(hex16(handle)) is \(bytes.count) bytes")
        }
        do { return try BluetoothUUID(littleEndian: bytes) } catch {
            throw .invalidResponse("the UUID at 0x\(hex16(handle)): \(error)")
        }
    }
}
