import BluetoothCore

/// An L2CAP channel identifier (CID), Core Vol 3 Part A 2.1.
///
/// A struct rather than an enum: a peer may address any CID, and a PDU for a channel we do
/// not serve must still decode so it can be counted and dropped.
public struct ChannelIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000: never used (the null identifier).
    public static let null = ChannelIdentifier(rawValue: 0x0000)
    /// 0x0004: the Attribute protocol's fixed channel on LE-U.
    public static let attributeProtocol = ChannelIdentifier(rawValue: 0x0004)
    /// 0x0005: the LE L2CAP signaling channel.
    public static let leSignaling = ChannelIdentifier(rawValue: 0x0005)
    /// 0x0006: the Security Manager protocol's fixed channel on LE-U.
    public static let securityManagerProtocol = ChannelIdentifier(rawValue: 0x0006)

    public var description: String {
        switch self {
        case .attributeProtocol: "ATT (0x0004)"
        case .leSignaling: "LE signaling (0x0005)"
        case .securityManagerProtocol: "SMP (0x0006)"
        default: "CID 0x\(Hex.string([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)]))"
        }
    }
}
