import BluetoothCore
import GATT

/// A service of a peripheral's database (`CBService`): its UUID, whether it is primary, its
/// characteristics and the services it includes. Built by ``Peripheral/discoverServices()``
/// from the ``GATTDatabase``; the declaration stays available as ``declaration``.
public final class Service: Sendable, CustomStringConvertible {
    public let declaration: GATTDatabase.Service
    public let characteristics: [Characteristic]
    /// The services this one includes, in declaration order (each also appears in
    /// ``Peripheral/services``).
    public let includedServices: [Service]

    init(_ declaration: GATTDatabase.Service, characteristics: [Characteristic], includedServices: [Service]) {
        self.declaration = declaration
        self.characteristics = characteristics
        self.includedServices = includedServices
    }

    public var uuid: BluetoothUUID { declaration.uuid }
    public var isPrimary: Bool { declaration.isPrimary }
    /// From the service declaration to its last attribute.
    public var handles: ClosedRange<UInt16> { declaration.handles }
    /// The SIG name ("Heart Rate"), or a vendor name BareBLE knows; nil otherwise.
    public var name: String? { GATTNames.service(for: uuid) }

    /// The first characteristic with `uuid`.
    public func characteristic(_ uuid: BluetoothUUID) -> Characteristic? {
        characteristics.first { $0.uuid == uuid }
    }

    public var description: String { "\(name ?? uuid.description) (\(uuid))" }
}
