import BluetoothCore
import GATT

/// A characteristic descriptor (`CBDescriptor`) and the last value read from it.
public final class Descriptor: Sendable, CustomStringConvertible {
    public let declaration: GATTDatabase.Descriptor
    let stored = Lock<[UInt8]?>(nil)

    init(_ declaration: GATTDatabase.Descriptor) {
        self.declaration = declaration
    }

    public var uuid: BluetoothUUID { declaration.uuid }
    public var handle: UInt16 { declaration.handle }
    /// The last value read; nil before.
    public var value: [UInt8]? { stored.withLock { $0 } }
    public var name: String? { GATTNames.descriptor(for: uuid) }

    /// ``value`` decoded (user description text, CCCD bits, presentation format ...).
    public func decodedValue(using decoder: CharacteristicValueDecoder = .standard) -> Result<DecodedValue, DecodeError>? {
        guard let value else { return nil }
        return decoder.decode(value, uuid: uuid)
    }

    func store(_ value: [UInt8]) { stored.withLock { $0 = value } }

    public var description: String { "\(name ?? uuid.description) (\(uuid))" }
}
