/// Initiator / Responder Key Distribution of Pairing Request and Response (Core Vol 3
/// Part H 3.6.1, Figure 3.11).
public struct KeyDistribution: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// EncKey: legacy LTK, EDIV and Rand (Encryption Information, Central Identification).
    /// Ignored under LE Secure Connections, whose LTK both sides derive.
    public static let encryptionKey = KeyDistribution(rawValue: 0x01)
    /// IdKey: IRK and identity address.
    public static let identityKey = KeyDistribution(rawValue: 0x02)
    /// SignKey: CSRK.
    public static let signingKey = KeyDistribution(rawValue: 0x04)
    /// LinkKey: derive a BR/EDR link key. BareBLE is LE-only and never sets it.
    public static let linkKey = KeyDistribution(rawValue: 0x08)

    /// The bits the specification defines; the rest are reserved (cleared in what we send).
    public static let defined: KeyDistribution = [.encryptionKey, .identityKey, .signingKey, .linkKey]

    public var description: String {
        var names: [String] = []
        if contains(.encryptionKey) { names.append("EncKey") }
        if contains(.identityKey) { names.append("IdKey") }
        if contains(.signingKey) { names.append("SignKey") }
        if contains(.linkKey) { names.append("LinkKey") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
