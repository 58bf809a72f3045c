import BluetoothCore

/// A peer's attribute database as discovery found it (Core 5.4 Vol 3 Part G 3): services
/// with their handle ranges, included services, characteristics with properties and value
/// handles, and descriptors. A plain value: the caller may keep it per bonded peer, with
/// ``databaseHash``, and hand it back to ``GATTClient/discover(remembered:)`` on reconnect
/// (GATT Caching, Part G 2.5.2).
public struct GATTDatabase: Sendable, Hashable {
    /// Primary and secondary services, by start handle.
    public var services: [Service]
    /// The Database Hash (0x2B2A, Part G 7.3) read when the database was discovered, or nil
    /// when the server has none. It says whether a remembered copy is still true.
    public var databaseHash: [UInt8]?

    public init(services: [Service] = [], databaseHash: [UInt8]? = nil) {
        self.services = services.sorted { $0.handles.lowerBound < $1.handles.lowerBound }
        self.databaseHash = databaseHash
    }

    public struct Service: Sendable, Hashable {
        public var uuid: BluetoothUUID
        /// From the service declaration to the group's last attribute.
        public var handles: ClosedRange<UInt16>
        public var isPrimary: Bool
        public var includes: [IncludedService]
        public var characteristics: [Characteristic]

        public init(
            uuid: BluetoothUUID, handles: ClosedRange<UInt16>, isPrimary: Bool = true,
            includes: [IncludedService] = [], characteristics: [Characteristic] = []
        ) {
            self.uuid = uuid
            self.handles = handles
            self.isPrimary = isPrimary
            self.includes = includes
            self.characteristics = characteristics
        }
    }

    /// An include declaration (0x2802, Part G 3.2).
    public struct IncludedService: Sendable, Hashable {
        /// The include declaration's own handle.
        public var handle: UInt16
        public var serviceHandles: ClosedRange<UInt16>
        public var uuid: BluetoothUUID

        public init(handle: UInt16, serviceHandles: ClosedRange<UInt16>, uuid: BluetoothUUID) {
            self.handle = handle
            self.serviceHandles = serviceHandles
            self.uuid = uuid
        }
    }

    public struct Characteristic: Sendable, Hashable {
        /// The characteristic declaration's handle.
        public var handle: UInt16
        public var properties: CharacteristicProperties
        public var valueHandle: UInt16
        public var uuid: BluetoothUUID
        /// The characteristic's last attribute: before the next declaration or the
        /// service's end. Its descriptors lie between ``valueHandle`` and this.
        public var endHandle: UInt16
        public var descriptors: [Descriptor]

        public init(
            handle: UInt16, properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID,
            endHandle: UInt16, descriptors: [Descriptor] = []
        ) {
            self.handle = handle
            self.properties = properties
            self.valueHandle = valueHandle
            self.uuid = uuid
            self.endHandle = endHandle
            self.descriptors = descriptors
        }

        public var declaration: CharacteristicDeclaration {
            CharacteristicDeclaration(properties: properties, valueHandle: valueHandle, uuid: uuid)
        }

        /// The Client Characteristic Configuration descriptor, which subscribing writes.
        public var clientCharacteristicConfigurationHandle: UInt16? {
            descriptors.first { $0.uuid == GATTUUID.clientCharacteristicConfiguration }?.handle
        }
    }

    public struct Descriptor: Sendable, Hashable {
        public var handle: UInt16
        public var uuid: BluetoothUUID

        public init(handle: UInt16, uuid: BluetoothUUID) {
            self.handle = handle
            self.uuid = uuid
        }
    }

    /// The first service with `uuid`.
    public func service(_ uuid: BluetoothUUID) -> Service? {
        services.first { $0.uuid == uuid }
    }

    /// The first characteristic with `uuid`, in `service` when given.
    public func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID? = nil) -> Characteristic? {
        for candidate in services where service == nil || candidate.uuid == service {
            if let found = candidate.characteristics.first(where: { $0.uuid == uuid }) { return found }
        }
        return nil
    }

    /// The characteristic whose value is at `valueHandle`.
    public func characteristic(valueHandle: UInt16) -> Characteristic? {
        for service in services {
            if let found = service.characteristics.first(where: { $0.valueHandle == valueHandle }) { return found }
        }
        return nil
    }

    /// Removes every service that overlaps `range` and returns the range that must be
    /// discovered again: `range` widened to the removed services' whole groups, since a
    /// service is discovered from its declaration.
    mutating func invalidate(_ range: ClosedRange<UInt16>) -> ClosedRange<UInt16> {
        var lower = range.lowerBound
        var upper = range.upperBound
        services.removeAll { service in
            guard service.handles.overlaps(range) else { return false }
            lower = min(lower, service.handles.lowerBound)
            upper = max(upper, service.handles.upperBound)
            return true
        }
        return lower...upper
    }

}

/// What Service Changed told the client, after it rediscovered the affected handles.
public struct GATTDatabaseChange: Sendable, Equatable {
    /// The handles the server said changed, widened to whole services.
    public var affectedHandles: ClosedRange<UInt16>
    /// The database after rediscovery; after a failed one, without the affected services
    /// and without a Database Hash.
    public var database: GATTDatabase
    /// Why the rediscovery failed (the link went, or the server answered nonsense); nil
    /// when it succeeded.
    public var failure: GATTError? = nil
}

/// One attribute's handle and value (Read Using Characteristic UUID answers with these).
public struct GATTAttributeValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// One value of a reliable write.
public struct GATTWrite: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}
