import BluetoothCore

/// The value of a characteristic declaration attribute (type 0x2803, Core Vol 3 Part G
/// 3.3.1): the properties, the handle of the value attribute and the characteristic UUID.
/// Discover All Characteristics of a Service reads these from Read By Type responses.
public struct CharacteristicDeclaration: Hashable, Sendable, CustomStringConvertible {
    public var properties: CharacteristicProperties
    /// The handle of the Characteristic Value attribute; never 0x0000.
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID

    public init(properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }

    /// From the 5 (16-bit UUID) or 19 (128-bit UUID) bytes of the attribute value. Any
    /// other length is a ``DecodeError/lengthMismatch(declared:actual:)`` (declared gives
    /// the nearer legal length); a value handle of 0x0000 is invalid, since handle 0 is
    /// reserved (Core Vol 3 Part F 3.2.2).
    public init(bytes: [UInt8]) throws(DecodeError) {
        guard bytes.count == 5 || bytes.count == 19 else {
            throw .lengthMismatch(declared: bytes.count < 19 ? 5 : 19, actual: bytes.count)
        }
        var reader = ByteReader(bytes)
        let properties = CharacteristicProperties(rawValue: try reader.readUInt8())
        let handle = try reader.readUInt16()
        guard handle != 0 else { throw .invalidValue(field: "Characteristic Value Handle", value: 0) }
        let uuid = try BluetoothUUID(littleEndian: reader.readRemaining())
        self.init(properties: properties, valueHandle: handle, uuid: uuid)
    }

    /// The attribute value: a 16-bit UUID when the UUID has one, else the 128-bit form.
    /// A 32-bit UUID is sent in its 128-bit form, since ATT carries only 16 or 128 bits.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.write(properties.rawValue)
        writer.write(valueHandle)
        writer.write(contentsOf: uuid.attributeBytes)
        return writer.bytes
    }

    public var description: String {
        let name = GATTNames.characteristic(for: uuid).map { " (\($0))" } ?? ""
        return "\(uuid)\(name), value handle 0x\(hex16(valueHandle)), properties: \(properties)"
    }
}
