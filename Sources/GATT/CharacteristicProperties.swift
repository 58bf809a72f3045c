import BluetoothCore

/// The Characteristic Properties bit field of a characteristic declaration (Core Vol 3
/// Part G 3.3.1.1): which procedures the server permits on the value.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)

    /// Every bit with its specification name, least significant first.
    public static let named: [(CharacteristicProperties, String)] = [
        (.broadcast, "Broadcast"),
        (.read, "Read"),
        (.writeWithoutResponse, "Write Without Response"),
        (.write, "Write"),
        (.notify, "Notify"),
        (.indicate, "Indicate"),
        (.authenticatedSignedWrites, "Authenticated Signed Writes"),
        (.extendedProperties, "Extended Properties"),
    ]

    /// The names of the bits set, least significant first.
    public var names: [String] {
        Self.named.compactMap { contains($0.0) ? $0.1 : nil }
    }

    /// "Read, Notify"; "None" when no bit is set.
    public var description: String {
        rawValue == 0 ? "None" : names.joined(separator: ", ")
    }
}

/// The Characteristic Extended Properties descriptor value (Core Vol 3 Part G 3.3.3.1).
public struct CharacteristicExtendedProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let reliableWrite = CharacteristicExtendedProperties(rawValue: 0x0001)
    public static let writableAuxiliaries = CharacteristicExtendedProperties(rawValue: 0x0002)

    /// From the descriptor's two bytes. Reserved bits are kept, not rejected: a later
    /// specification may define them and the value is only shown.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt16()
        try reader.expectEnd()
        self.init(rawValue: raw)
    }

    public var bytes: [UInt8] { [UInt8(rawValue & 0xFF), UInt8(rawValue >> 8)] }

    public var description: String {
        var names: [String] = []
        if contains(.reliableWrite) { names.append("Reliable Write") }
        if contains(.writableAuxiliaries) { names.append("Writable Auxiliaries") }
        let reserved = rawValue & ~0x0003
        if reserved != 0 { names.append("reserved bits 0x\(hex16(reserved))") }
        return names.isEmpty ? "None" : names.joined(separator: ", ")
    }
}
