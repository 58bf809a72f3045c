import BluetoothCore

/// The Client Characteristic Configuration descriptor value (0x2902, Core Vol 3 Part G
/// 3.3.3.3): whether this client wants notifications or indications of the value.
public struct ClientCharacteristicConfiguration: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notification = ClientCharacteristicConfiguration(rawValue: 0x0001)
    public static let indication = ClientCharacteristicConfiguration(rawValue: 0x0002)

    /// From the descriptor's two bytes. Reserved bits are kept rather than rejected: a
    /// server stores what a client wrote, and a client shows what it read.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt16()
        try reader.expectEnd()
        self.init(rawValue: raw)
    }

    /// The two bytes to write to the descriptor.
    public var bytes: [UInt8] { [UInt8(rawValue & 0xFF), UInt8(rawValue >> 8)] }

    /// "Notifications and indications disabled", "Notifications enabled", ...
    public var description: String {
        var parts: [String] = []
        switch (contains(.notification), contains(.indication)) {
        case (false, false): parts.append("Notifications and indications disabled")
        case (true, false): parts.append("Notifications enabled")
        case (false, true): parts.append("Indications enabled")
        case (true, true): parts.append("Notifications and indications enabled")
        }
        let reserved = rawValue & ~0x0003
        if reserved != 0 { parts.append("reserved bits 0x\(hex16(reserved))") }
        return parts.joined(separator: ", ")
    }
}
