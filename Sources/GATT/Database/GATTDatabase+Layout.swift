import BluetoothCore

/// Why declared services cannot be laid out into handles.
public enum GATTLayoutError: Error, Sendable, Hashable {
    /// The services do not fit below handle 0xFFFF.
    case handlesExhausted
    /// An include names a service (by UUID, or UUID and handles) the database does not hold.
    case includedServiceMissing(BluetoothUUID)
    /// A characteristic has the Extended Properties bit but no Characteristic Extended
    /// Properties descriptor, or has one without a value (Core 5.4 Vol 3 Part G 3.3.1.1,
    /// 3.3.3.1).
    case extendedPropertiesMissing(BluetoothUUID)
    /// A service to remove is still included by another one (Part G 3.2).
    case serviceStillIncluded(ClosedRange<UInt16>)
    /// No service starts at this handle.
    case noSuchService(UInt16)
    /// The server's own GAP or GATT service: removing it would take Service Changed and
    /// the Database Hash with it.
    case builtInService(UInt16)
}

extension GATTDatabase {
    /// A server's database: `services` laid out from handle 0x0001 in the order given.
    public static func laidOut(from services: [Service]) throws(GATTLayoutError) -> GATTDatabase {
        var database = GATTDatabase()
        _ = try database.add(services)
        return database
    }

    /// Lays out declared services (their handles are ignored) after the last handle in use,
    /// in the order given, and returns the handles they took. Within a service: the
    /// declaration, the includes, then per characteristic its declaration, its value
    /// (declaration + 1, Part G 3.3), its descriptors in the order given and, when it can
    /// notify or indicate and none was given, a CCCD last (Bumble's order). An include names
    /// a service by UUID (the first in handle order, the new ones counted), or by UUID and
    /// handles when it gives them (a service already laid out), and takes its handles. Nothing changes when an error is thrown; nil when `declared` is empty.
    @discardableResult
    public mutating func add(_ declared: [Service]) throws(GATTLayoutError) -> ClosedRange<UInt16>? {
        let first = UInt32(services.last?.handles.upperBound ?? 0) + 1
        var next = first
        func take() throws(GATTLayoutError) -> UInt16 {
            guard next <= 0xFFFF else { throw .handlesExhausted }
            defer { next += 1 }
            return UInt16(next)
        }
        var placed: [Service] = []
        for var service in declared {
            let start = try take()
            for index in service.includes.indices { service.includes[index].handle = try take() }
            for index in service.characteristics.indices {
                try Self.place(&service.characteristics[index], take: take)
            }
            service.handles = start...UInt16(next - 1)
            placed.append(service)
        }
        var all = services + placed
        for serviceIndex in all.indices.dropFirst(services.count) {
            for includeIndex in all[serviceIndex].includes.indices {
                let include = all[serviceIndex].includes[includeIndex]
                let named = include.serviceHandles == 0...0
                    ? all.first { $0.uuid == include.uuid }
                    : all.first { $0.uuid == include.uuid && $0.handles == include.serviceHandles }
                guard let target = named else { throw .includedServiceMissing(include.uuid) }
                all[serviceIndex].includes[includeIndex].serviceHandles = target.handles
            }
        }
        services = all
        guard next > first else { return nil }
        return UInt16(first)...UInt16(next - 1)
    }

    private static func place(
        _ characteristic: inout Characteristic, take: () throws(GATTLayoutError) -> UInt16
    ) throws(GATTLayoutError) {
        // The hash covers the Extended Properties value, so a server must know it.
        let extended = characteristic.descriptors.filter { $0.uuid == GATTUUID.characteristicExtendedProperties }
        if extended.contains(where: { $0.value == nil })
            || (characteristic.properties.contains(.extendedProperties) && extended.isEmpty) {
            throw .extendedPropertiesMissing(characteristic.uuid)
        }
        let subscribable = !characteristic.properties.isDisjoint(with: [.notify, .indicate])
        if subscribable, characteristic.clientCharacteristicConfigurationHandle == nil {
            characteristic.descriptors.append(Descriptor(uuid: GATTUUID.clientCharacteristicConfiguration))
        }
        characteristic.handle = try take()
        characteristic.valueHandle = try take()
        for index in characteristic.descriptors.indices { characteristic.descriptors[index].handle = try take() }
        characteristic.endHandle = characteristic.descriptors.last?.handle ?? characteristic.valueHandle
    }

    /// Removes the service that starts at `handle` and returns the handles it held.
    public mutating func removeService(at handle: UInt16) throws(GATTLayoutError) -> ClosedRange<UInt16> {
        guard let index = services.firstIndex(where: { $0.handles.lowerBound == handle }) else { throw .noSuchService(handle) }
        let handles = services[index].handles
        if services.contains(where: { $0.includes.contains { $0.serviceHandles == handles } }) {
            throw .serviceStillIncluded(handles)
        }
        services.remove(at: index)
        return handles
    }
}
