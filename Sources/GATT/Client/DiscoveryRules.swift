import BluetoothCore

// What a discovered database must look like before the client believes it (Core 5.4 Vol 3
// Part G 3). A server that breaks a rule gets a `GATTError.invalidResponse` naming what it
// sent, never a normalised guess: the people who explore buggy devices with this want to
// see the bug, and a silently repaired database would put reads and writes on the wrong
// handles. specs/gatt-client.md ("Discovery rules") lists the rules.

/// The ordering rule every discovery chain keeps: each entry of each answer covers
/// `first...last` (a service's group, a characteristic's declaration and value, a single
/// include or descriptor), lies inside the range asked for, and starts after everything the
/// chain was given before (ascending, no overlap, no duplicate). Handle 0x0000 is reserved
/// (Vol 3 Part F 3.2.2), so no chain asks for it and no entry can be there.
struct DiscoveredHandles {
    let procedure: String
    let range: ClosedRange<UInt16>
    /// The last handle taken so far: the chain asks on from the one after it.
    private(set) var last: UInt16?

    init(procedure: String, range: ClosedRange<UInt16>) {
        self.procedure = procedure
        self.range = range
    }

    /// The entry's handles, once they keep the rule.
    mutating func take(_ first: UInt16, through end: UInt16, _ what: String) throws(GATTError) -> ClosedRange<UInt16> {
        let shown = first == end ? "0x\(hex16(first))" : "0x\(hex16(first))...0x\(hex16(end))"
        guard first <= end else {
            throw .invalidResponse("\(procedure): \(what) 0x\(hex16(first)) ends at 0x\(hex16(end)), before it starts")
        }
        guard range.contains(first), range.contains(end) else {
            throw .invalidResponse("\(procedure): \(what) \(shown) lies outside the range asked for, 0x\(hex16(range.lowerBound))...0x\(hex16(range.upperBound))")
        }
        if let last, first <= last {
            throw .invalidResponse("\(procedure): \(what) \(shown) does not come after 0x\(hex16(last)), the end of the entry before it (entries ascend without overlapping)")
        }
        last = end
        return first...end
    }
}

extension DiscoveredHandles {
    /// Takes a characteristic, whose value is the attribute right after its declaration
    /// (Part G 3.3: "immediately following"). So nothing can hide between the two, and a
    /// chain may ask on after the value.
    mutating func takeCharacteristic(_ handle: UInt16, valueHandle: UInt16) throws(GATTError) {
        guard Int(valueHandle) == Int(handle) + 1 else {
            throw .invalidResponse("the characteristic declaration at 0x\(hex16(handle)) puts its value at 0x\(hex16(valueHandle)), not right after it")
        }
        _ = try take(handle, through: valueHandle, "characteristic")
    }

    /// Takes a descriptor of the characteristic at `characteristic`; a declaration there
    /// means the characteristic (or service) ended before it and the server's other
    /// answers hid that.
    mutating func takeDescriptor(_ handle: UInt16, type: BluetoothUUID, of characteristic: UInt16) throws(GATTError) {
        _ = try take(handle, through: handle, "descriptor")
        guard !GATTDatabase.declarationTypes.contains(type) else {
            throw .invalidResponse("the attribute at 0x\(hex16(handle)) inside the characteristic at 0x\(hex16(characteristic)) is a declaration (\(type)), not a descriptor")
        }
    }
}

extension GATTDatabase {
    static let declarationTypes: Set<BluetoothUUID> = [
        GATTUUID.primaryService, GATTUUID.secondaryService, GATTUUID.include, GATTUUID.characteristicDeclaration,
    ]

    /// True when discovery could have built exactly this database from its declarations:
    /// every rule above holds across all of it. A database read back from a cache file
    /// must pass, so a damaged or edited file is a cache miss, not a wrong database.
    var keepsDiscoveryRules: Bool {
        do {
            var serviceOrder = DiscoveredHandles(procedure: "services", range: 0x0001...0xFFFF)
            var primaries: [Service] = []
            for service in services where service.isPrimary {
                let handles = try serviceOrder.take(service.handles.lowerBound, through: service.handles.upperBound, "service")
                primaries.append(Service(uuid: service.uuid, handles: handles))
            }
            var includeOrder = DiscoveredHandles(procedure: "includes", range: 0x0001...0xFFFF)
            let includes = services.flatMap(\.includes)
            for include in includes { _ = try includeOrder.take(include.handle, through: include.handle, "include declaration") }
            var characteristicOrder = DiscoveredHandles(procedure: "characteristics", range: 0x0001...0xFFFF)
            var bare: [Characteristic] = []
            for characteristic in services.flatMap(\.characteristics) {
                try characteristicOrder.takeCharacteristic(characteristic.handle, valueHandle: characteristic.valueHandle)
                var stripped = characteristic
                stripped.descriptors = []
                bare.append(stripped)
            }
            let rebuilt = try Self.place(bare, in: try Self.assemble(primaries: primaries, includes: includes))
            var withoutDescriptors = services
            for index in withoutDescriptors.indices {
                for position in withoutDescriptors[index].characteristics.indices {
                    withoutDescriptors[index].characteristics[position].descriptors = []
                }
            }
            guard rebuilt == withoutDescriptors else { return false }
            for characteristic in services.flatMap(\.characteristics) {
                guard characteristic.valueHandle < characteristic.endHandle else {
                    if !characteristic.descriptors.isEmpty { return false }
                    continue
                }
                var order = DiscoveredHandles(procedure: "descriptors", range: (characteristic.valueHandle + 1)...characteristic.endHandle)
                for descriptor in characteristic.descriptors {
                    try order.takeDescriptor(descriptor.handle, type: descriptor.uuid, of: characteristic.handle)
                }
            }
            return true
        } catch {
            return false
        }
    }

    /// The services that discovery answers seen elsewhere describe (a trace of another
    /// client's discovery, `bareble-trace gatt`), built and checked as the client's own
    /// discovery builds them: `primaries` (Read By Group Type), the include declarations,
    /// the characteristic declarations (end handles are set here) and the descriptors
    /// (Find Information), each placed in the characteristic whose range holds it; one that
    /// lies in none, or is a declaration, is left out.
    public static func rebuilt(
        primaries: [Service], includes: [IncludedService], characteristics: [Characteristic], descriptors: [Descriptor]
    ) throws(GATTError) -> [Service] {
        var services = try place(
            characteristics.sorted { $0.handle < $1.handle },
            in: try assemble(primaries: primaries.sorted { $0.handles.lowerBound < $1.handles.lowerBound }, includes: includes.sorted { $0.handle < $1.handle }))
        for descriptor in descriptors.sorted(by: { $0.handle < $1.handle }) where !declarationTypes.contains(descriptor.uuid) {
            guard let index = services.firstIndex(where: { $0.handles.contains(descriptor.handle) }),
                  let position = services[index].characteristics.firstIndex(where: { $0.valueHandle < descriptor.handle && descriptor.handle <= $0.endHandle })
            else { continue }
            services[index].characteristics[position].descriptors.append(descriptor)
        }
        return services
    }

    /// The services of a discovery: `primaries` (already ascending and disjoint) and the
    /// secondary services `includes` point at, each include in the service it lies in.
    /// Checked before characteristics are asked for, so a server that lied stops costing
    /// requests.
    static func assemble(primaries: [Service], includes: [IncludedService]) throws(GATTError) -> [Service] {
        var services = primaries
        for include in includes {
            let target = include.serviceHandles
            let at = "the include at 0x\(hex16(include.handle)) names 0x\(hex16(target.lowerBound))...0x\(hex16(target.upperBound))"
            if let named = services.first(where: { $0.handles == target }) {
                guard named.uuid == include.uuid else {
                    throw .invalidResponse("\(at) as \(include.uuid), but that service is \(named.uuid)")
                }
            } else if let overlapped = services.first(where: { $0.handles.overlaps(target) }) {
                throw .invalidResponse("\(at), which overlaps the service at 0x\(hex16(overlapped.handles.lowerBound))...0x\(hex16(overlapped.handles.upperBound))")
            } else {
                // Secondary services are reached only through includes (Part G 3.1).
                services.append(Service(uuid: include.uuid, handles: target, isPrimary: false))
            }
        }
        services.sort { $0.handles.lowerBound < $1.handles.lowerBound }

        for include in includes {
            let index = try owner(of: include.handle, in: services, "include declaration")
            guard services[index].handles != include.serviceHandles else {
                throw .invalidResponse("the service at 0x\(hex16(include.serviceHandles.lowerBound)) includes itself (include at 0x\(hex16(include.handle)))")
            }
            services[index].includes.append(include)
        }
        return services
    }

    /// `services` with each characteristic (ascending) in the service it lies in, with its
    /// end handle. Descriptors are not known yet.
    static func place(_ characteristics: [Characteristic], in assembled: [Service]) throws(GATTError) -> [Service] {
        var services = assembled
        for characteristic in characteristics {
            let index = try owner(of: characteristic.handle, in: services, "characteristic declaration")
            let handles = services[index].handles
            guard handles.contains(characteristic.valueHandle) else {
                throw .invalidResponse("the characteristic at 0x\(hex16(characteristic.handle)) has its value at 0x\(hex16(characteristic.valueHandle)), outside its service 0x\(hex16(handles.lowerBound))...0x\(hex16(handles.upperBound))")
            }
            // Part G 3.1: includes follow the service declaration, before any characteristic.
            if let late = services[index].includes.first(where: { $0.handle > characteristic.handle }) {
                throw .invalidResponse("the include declaration at 0x\(hex16(late.handle)) comes after the characteristic at 0x\(hex16(characteristic.handle)); includes precede characteristics")
            }
            if let previous = services[index].characteristics.indices.last {
                // Ascending declarations, each value right after its declaration: no underflow.
                services[index].characteristics[previous].endHandle = characteristic.handle - 1
            }
            var placed = characteristic
            placed.endHandle = handles.upperBound
            services[index].characteristics.append(placed)
        }
        return services
    }

    /// The index of the service `handle` belongs to: after its declaration, within its group.
    private static func owner(of handle: UInt16, in services: [Service], _ what: String) throws(GATTError) -> Int {
        guard let index = services.firstIndex(where: { $0.handles.lowerBound < handle && handle <= $0.handles.upperBound }) else {
            throw .invalidResponse("the \(what) at 0x\(hex16(handle)) lies outside every service")
        }
        return index
    }

    /// Adds services rediscovered after Service Changed. One with the same handles as a
    /// kept service replaces it (an include outside the changed range reached it again);
    /// any other overlap with a kept service is the server's contradiction.
    mutating func merge(_ rediscovered: [Service]) throws(GATTError) {
        for service in rediscovered {
            services.removeAll { $0.handles == service.handles }
            if let kept = services.first(where: { $0.handles.overlaps(service.handles) }) {
                throw .invalidResponse("the rediscovered service at 0x\(hex16(service.handles.lowerBound))...0x\(hex16(service.handles.upperBound)) overlaps the unchanged service at 0x\(hex16(kept.handles.lowerBound))...0x\(hex16(kept.handles.upperBound))")
            }
            services.append(service)
        }
        services.sort { $0.handles.lowerBound < $1.handles.lowerBound }
    }
}
