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
        try await chain(range, name: "Discover All Primary Services") { (start) async throws(GATTError) -> UInt16? in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.readByGroupType(start...range.upperBound, type: GATTUUID.primaryService)
            }) else { return nil }
            var last: UInt16 = 0
            for entry in response.attributeDataList {
                guard entry.attributeHandle >= start, entry.endGroupHandle >= entry.attributeHandle,
                      entry.endGroupHandle <= range.upperBound
                else { throw .invalidResponse("service 0x\(hex16(entry.attributeHandle))...0x\(hex16(entry.endGroupHandle)) lies outside the range asked for") }
                let uuid = try decodeUUID(entry.attributeValue, at: entry.attributeHandle)
                services.append(.init(uuid: uuid, handles: entry.attributeHandle...entry.endGroupHandle))
                last = max(last, entry.endGroupHandle)
            }
            return last
        }
        return services
    }

    /// Discover Primary Service by Service UUID (4.4.2): Find By Type Value 0x2800.
    public func discoverPrimaryServices(
        uuid: BluetoothUUID, in range: ClosedRange<UInt16> = 0x0001...0xFFFF
    ) async throws(GATTError) -> [GATTDatabase.Service] {
        let value = uuid.byteWidth == 2 ? uuid.littleEndianBytes : uuid.littleEndianBytes128
        var services: [GATTDatabase.Service] = []
        try await chain(range, name: "Discover Primary Service by Service UUID") { (start) async throws(GATTError) -> UInt16? in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.findByTypeValue(start...range.upperBound, type: 0x2800, value: value)
            }) else { return nil }
            var last: UInt16 = 0
            for entry in response.handlesInformationList {
                guard entry.foundAttributeHandle >= start, entry.groupEndHandle >= entry.foundAttributeHandle else {
                    throw .invalidResponse("service 0x\(hex16(entry.foundAttributeHandle)) lies outside the range asked for")
                }
                services.append(.init(uuid: uuid, handles: entry.foundAttributeHandle...entry.groupEndHandle))
                last = max(last, entry.groupEndHandle)
            }
            return last
        }
        return services
    }

    /// Find Included Services (4.5.1): Read By Type 0x2802 over `range`. An include that
    /// carries no UUID names a 128-bit service, whose UUID is read from its declaration.
    public func findIncludedServices(in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.IncludedService] {
        var includes: [GATTDatabase.IncludedService] = []
        try await chain(range, name: "Find Included Services") { (start) async throws(GATTError) -> UInt16? in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.readByType(start...range.upperBound, type: GATTUUID.include)
            }) else { return nil }
            var last: UInt16 = 0
            for entry in response.attributeDataList {
                var reader = ByteReader(entry.attributeValue)
                guard entry.attributeHandle >= start,
                      let first = try? reader.readUInt16(), let end = try? reader.readUInt16(), first <= end, first > 0,
                      entry.attributeValue.count == 4 || entry.attributeValue.count == 6
                else { throw .invalidResponse("include declaration at 0x\(hex16(entry.attributeHandle)) does not decode") }
                let uuid: BluetoothUUID
                if entry.attributeValue.count == 6 {
                    uuid = try decodeUUID(Array(entry.attributeValue[4...]), at: entry.attributeHandle)
                } else {
                    let declaration = try await request { () async throws(ATTError) in try await att.read(first) }
                    guard declaration.attributeValue.count == 16 else {
                        throw .invalidResponse("service declaration at 0x\(hex16(first)) has no 128-bit UUID")
                    }
                    uuid = try decodeUUID(declaration.attributeValue, at: first)
                }
                includes.append(.init(handle: entry.attributeHandle, serviceHandles: first...end, uuid: uuid))
                last = max(last, entry.attributeHandle)
            }
            return last
        }
        return includes
    }

    /// Discover All Characteristics of a Service (4.6.1): Read By Type 0x2803 over
    /// `range`. End handles are left at `range`'s end; ``discoverServices(in:)`` sets them.
    public func discoverAllCharacteristics(in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.Characteristic] {
        var characteristics: [GATTDatabase.Characteristic] = []
        try await chain(range, name: "Discover All Characteristics of a Service") { (start) async throws(GATTError) -> UInt16? in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.readByType(start...range.upperBound, type: GATTUUID.characteristicDeclaration)
            }) else { return nil }
            var last: UInt16 = 0
            for entry in response.attributeDataList {
                guard entry.attributeHandle >= start else {
                    throw .invalidResponse("declaration 0x\(hex16(entry.attributeHandle)) lies before the range asked for")
                }
                let declaration: CharacteristicDeclaration
                do { declaration = try CharacteristicDeclaration(bytes: entry.attributeValue) } catch {
                    throw .invalidResponse("characteristic declaration at 0x\(hex16(entry.attributeHandle)): \(error)")
                }
                characteristics.append(.init(
                    handle: entry.attributeHandle, properties: declaration.properties, valueHandle: declaration.valueHandle,
                    uuid: declaration.uuid, endHandle: range.upperBound))
                // The value follows its declaration, so the next declaration cannot lie
                // before it: asking from there saves a request when the value ends the range.
                last = max(last, entry.attributeHandle, declaration.valueHandle)
            }
            return last
        }
        for index in characteristics.indices.dropLast() {
            characteristics[index].endHandle = max(characteristics[index].handle, characteristics[index + 1].handle - 1)
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
        try await chain(range, name: "Discover All Characteristic Descriptors") { (start) async throws(GATTError) -> UInt16? in
            guard let response = try await notFoundIsEnd({ () async throws(ATTError) in
                try await att.findInformation(start...range.upperBound)
            }) else { return nil }
            var last: UInt16 = 0
            for entry in response.informationData {
                guard range.contains(entry.handle), entry.handle >= start else {
                    throw .invalidResponse("descriptor 0x\(hex16(entry.handle)) lies outside the range asked for")
                }
                descriptors.append(.init(handle: entry.handle, uuid: entry.type))
                last = max(last, entry.handle)
            }
            return last
        }
        return descriptors
    }

    /// Every service in `range` with its includes, characteristics and descriptors.
    /// Includes and characteristics are asked for over the span of all services at once.
    public func discoverServices(in range: ClosedRange<UInt16>) async throws(GATTError) -> [GATTDatabase.Service] {
        var services = try await discoverAllPrimaryServices(in: range)
        guard let first = services.first, let lastService = services.last else { return [] }
        let span = first.handles.lowerBound...lastService.handles.upperBound
        let includes = try await findIncludedServices(in: span)
        // Secondary services are reached only through includes (Part G 3.1).
        for include in includes where !services.contains(where: { $0.handles == include.serviceHandles }) {
            services.append(.init(uuid: include.uuid, handles: include.serviceHandles, isPrimary: false))
        }
        services.sort { $0.handles.lowerBound < $1.handles.lowerBound }
        let whole = min(span.lowerBound, services[0].handles.lowerBound)...max(span.upperBound, services.map(\.handles.upperBound).max() ?? span.upperBound)
        let characteristics = try await discoverAllCharacteristics(in: whole)
        for index in services.indices {
            let handles = services[index].handles
            services[index].includes = includes.filter { handles.contains($0.handle) }
            var owned = characteristics.filter { handles.contains($0.handle) }
            for position in owned.indices {
                owned[position].endHandle = position + 1 < owned.count ? owned[position + 1].handle - 1 : handles.upperBound
            }
            for position in owned.indices {
                owned[position].descriptors = try await discoverAllDescriptors(of: owned[position])
            }
            services[index].characteristics = owned
        }
        return services
    }

    // MARK: Chains

    /// Runs `step` from `range`'s start; each step returns the last handle it was given
    /// (nil at Attribute Not Found), and the next asks from the handle after it, until the
    /// range's end. A step that does not advance is the server's error, not a loop.
    func chain(
        _ range: ClosedRange<UInt16>, name: String,
        _ step: (UInt16) async throws(GATTError) -> UInt16?
    ) async throws(GATTError) {
        var start = range.lowerBound
        while true {
            guard let last = try await step(start) else { return }
            guard last >= start else { throw .invalidResponse("\(name) did not advance past 0x\(hex16(start))") }
            if last >= range.upperBound { return }
            start = last + 1
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
