/// AuthReq of Pairing Request, Pairing Response and Security Request (Core Vol 3 Part H
/// 3.5.1, Figure 3.3): bonding flags in bits 0-1, then MITM, SC, Keypress, CT2. Bits 6-7
/// are reserved: kept when decoded, never set by us.
public struct AuthenticationRequirements: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bonding_Flags = 0b01: the device wants to store the keys (bond).
    public static let bonding = AuthenticationRequirements(rawValue: 0x01)
    /// Protection against man-in-the-middle attacks is requested.
    public static let mitm = AuthenticationRequirements(rawValue: 0x04)
    /// LE Secure Connections pairing is supported.
    public static let secureConnections = AuthenticationRequirements(rawValue: 0x08)
    /// Keypress notifications are wanted in Passkey Entry.
    public static let keypress = AuthenticationRequirements(rawValue: 0x10)
    /// h7 is supported for link key conversion (Vol 3 Part H 2.4.2.4).
    public static let ct2 = AuthenticationRequirements(rawValue: 0x20)

    /// Bonding_Flags exactly 0b01; 0b10 and 0b11 are reserved and mean no bonding.
    public var wantsBonding: Bool { rawValue & 0x03 == 0x01 }

    public var description: String {
        var names: [String] = []
        if wantsBonding { names.append("bonding") }
        if contains(.mitm) { names.append("MITM") }
        if contains(.secureConnections) { names.append("SC") }
        if contains(.keypress) { names.append("keypress") }
        if contains(.ct2) { names.append("CT2") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
