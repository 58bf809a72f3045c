import BluetoothCore
import GATT

/// A characteristic (`CBCharacteristic`): UUID, properties, descriptors, and the last value
/// read or pushed by the peer. Reading and writing go through its ``Peripheral``, as in
/// CoreBluetooth.
public final class Characteristic: Sendable, CustomStringConvertible {
    public let declaration: GATTDatabase.Characteristic
    public let descriptors: [Descriptor]
    /// The UUID of the service it belongs to.
    public let serviceUUID: BluetoothUUID
    let state = Lock<(value: [UInt8]?, notifying: Bool, dropped: Int)>((nil, false, 0))

    init(_ declaration: GATTDatabase.Characteristic, serviceUUID: BluetoothUUID, descriptors: [Descriptor]) {
        self.declaration = declaration
        self.serviceUUID = serviceUUID
        self.descriptors = descriptors
    }

    public var uuid: BluetoothUUID { declaration.uuid }
    public var properties: CharacteristicProperties { declaration.properties }
    public var valueHandle: UInt16 { declaration.valueHandle }
    /// The last value read, or notified/indicated by the peer; nil before either.
    public var value: [UInt8]? { state.withLock { $0.value } }
    /// True while a stream from ``Peripheral/notifications(for:indicate:)`` is open.
    public var isNotifying: Bool { state.withLock { $0.notifying } }
    /// Values its notification streams dropped because their consumer fell more than
    /// ``Peripheral/notificationBufferLimit`` values behind (the oldest go first).
    public var droppedNotifications: Int { state.withLock { $0.dropped } }
    public var name: String? { GATTNames.characteristic(for: uuid) }

    /// The first descriptor with `uuid`.
    public func descriptor(_ uuid: BluetoothUUID) -> Descriptor? {
        descriptors.first { $0.uuid == uuid }
    }

    /// The Characteristic Presentation Format, once its descriptor was read.
    public var presentationFormat: CharacteristicPresentationFormat? {
        guard let bytes = descriptor(GATTUUID.characteristicPresentationFormat)?.value else { return nil }
        return try? CharacteristicPresentationFormat(bytes: bytes)
    }

    /// The User Description (0x2901), once its descriptor was read.
    public var userDescription: String? {
        descriptor(GATTUUID.characteristicUserDescription)?.value.map { GATTString.decode($0) }
    }

    /// ``value`` decoded by `decoder` (the SIG formats BareBLE knows, else the
    /// presentation format); nil when there is no value or no way to decode it.
    public func decodedValue(using decoder: CharacteristicValueDecoder = .standard) -> Result<DecodedValue, DecodeError>? {
        guard let value else { return nil }
        return decoder.decode(value, uuid: uuid, presentationFormat: presentationFormat)
    }

    func store(_ value: [UInt8]) { state.withLock { $0.value = value } }
    func setNotifying(_ notifying: Bool) { state.withLock { $0.notifying = notifying } }
    func countDroppedNotification() {
        let count = state.withLock { state in
            state.dropped += 1
            return state.dropped
        }
        HostLog.logger.droppedForOverflow(
            "notification dropped: the characteristic's stream reader fell behind", counter: "dropped", count: count,
            metadata: ["characteristic": "\(uuid)"])
    }

    public var description: String { "\(name ?? uuid.description) (\(uuid)) [\(properties)]" }
}
