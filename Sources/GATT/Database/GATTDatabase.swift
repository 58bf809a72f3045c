import ATT
import BluetoothCore

/// An attribute database (Core 5.4 Vol 3 Part G 3): services with their handle ranges,
/// included services, characteristics with properties and value handles, and descriptors.
/// One model for both sides, as BlueZ's `gatt-db`:
/// - the client's cache of a peer, as discovery found it: a plain value the caller may keep
///   per bonded peer, with ``databaseHash``, and hand back to
///   ``GATTClient/discover(remembered:)`` on reconnect (GATT Caching, Part G 2.5.2);
///   `value` fields hold what was last read, when anything was;
/// - the server's own table (``GATTServerStore``): the same services laid out into handles
///   (``laidOut(from:)``), with each attribute's stored value or application handler and its
///   permissions.
/// The server-only fields are optional and nil by default, so the client never sets them.
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

        /// `handles` may be left out while the service is only declared (a server's, before
        /// ``GATTDatabase/laidOut(from:)`` gives it its place): 0 is no attribute's handle.
        public init(
            uuid: BluetoothUUID, handles: ClosedRange<UInt16> = 0...0, isPrimary: Bool = true,
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

        /// A server's include of the service with `uuid` (the first one in handle order),
        /// which layout resolves to that service's handles. To include one of several
        /// services with one UUID, give its handles with ``init(handle:serviceHandles:uuid:)``
        /// (handle 0: layout places the include).
        public init(uuid: BluetoothUUID) {
            self.init(handle: 0, serviceHandles: 0...0, uuid: uuid)
        }

        /// The include declaration's value (Part G 3.2): the included service's handles, and
        /// its UUID only when that is a 16-bit one.
        public var declarationValue: [UInt8] {
            var writer = ByteWriter(capacity: 6)
            writer.write(serviceHandles.lowerBound)
            writer.write(serviceHandles.upperBound)
            if uuid.byteWidth == 2 { writer.write(contentsOf: uuid.littleEndianBytes) }
            return writer.bytes
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
        /// The server's stored value, or the client's last-read one; nil when unknown (or
        /// when ``handler`` produces it).
        public var value: [UInt8]?
        /// Who may read and write the value (server); nil on the client.
        public var permissions: ATTPermissions?
        /// The application's read and write of the value (server); nil serves ``value``.
        public var handler: GATTAttributeHandler?

        public init(
            handle: UInt16, properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID,
            endHandle: UInt16, descriptors: [Descriptor] = [],
            value: [UInt8]? = nil, permissions: ATTPermissions? = nil, handler: GATTAttributeHandler? = nil
        ) {
            self.handle = handle
            self.properties = properties
            self.valueHandle = valueHandle
            self.uuid = uuid
            self.endHandle = endHandle
            self.descriptors = descriptors
            self.value = value
            self.permissions = permissions
            self.handler = handler
        }

        /// A server's characteristic before layout gives it handles. Permissions default
        /// to what `properties` allow, unprotected.
        public init(
            uuid: BluetoothUUID, properties: CharacteristicProperties, value: [UInt8]? = nil,
            permissions: ATTPermissions? = nil, handler: GATTAttributeHandler? = nil, descriptors: [Descriptor] = []
        ) {
            self.init(
                handle: 0, properties: properties, valueHandle: 0, uuid: uuid, endHandle: 0, descriptors: descriptors,
                value: value, permissions: permissions, handler: handler
            )
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
        /// The server's stored value, or the client's last-read one; nil when unknown. The
        /// Database Hash needs the Characteristic Extended Properties' value (Part G 7.3.1).
        public var value: [UInt8]?
        /// Who may read and write it (server); nil on the client.
        public var permissions: ATTPermissions?
        /// The application's read and write (server); nil serves ``value``.
        public var handler: GATTAttributeHandler?

        public init(
            handle: UInt16, uuid: BluetoothUUID, value: [UInt8]? = nil,
            permissions: ATTPermissions? = nil, handler: GATTAttributeHandler? = nil
        ) {
            self.handle = handle
            self.uuid = uuid
            self.value = value
            self.permissions = permissions
            self.handler = handler
        }

        /// A server's descriptor before layout gives it a handle.
        public init(uuid: BluetoothUUID, value: [UInt8]? = nil, permissions: ATTPermissions? = nil, handler: GATTAttributeHandler? = nil) {
            self.init(handle: 0, uuid: uuid, value: value, permissions: permissions, handler: handler)
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
