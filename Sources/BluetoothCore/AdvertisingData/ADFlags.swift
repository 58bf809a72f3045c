/// The Flags AD type's bits (Core Specification Supplement Part A 1.3).
public struct ADFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverableMode = ADFlags(rawValue: 1 << 0)
    public static let leGeneralDiscoverableMode = ADFlags(rawValue: 1 << 1)
    public static let brEDRNotSupported = ADFlags(rawValue: 1 << 2)
    /// "Simultaneous LE and BR/EDR to Same Device Capable (Controller)". Recent
    /// Supplement revisions retire bits 3 and 4, but dual-mode devices still set them.
    public static let simultaneousLEAndBREDRController = ADFlags(rawValue: 1 << 3)
    /// "Simultaneous LE and BR/EDR to Same Device Capable (Host)".
    public static let simultaneousLEAndBREDRHost = ADFlags(rawValue: 1 << 4)

    /// What a connectable, discoverable LE-only peripheral advertises (0x06).
    public static let generalDiscoverableLEOnly: ADFlags = [.leGeneralDiscoverableMode, .brEDRNotSupported]

    public var description: String {
        let names: [(ADFlags, String)] = [
            (.leLimitedDiscoverableMode, "LE Limited Discoverable"),
            (.leGeneralDiscoverableMode, "LE General Discoverable"),
            (.brEDRNotSupported, "BR/EDR Not Supported"),
            (.simultaneousLEAndBREDRController, "LE and BR/EDR (Controller)"),
            (.simultaneousLEAndBREDRHost, "LE and BR/EDR (Host)"),
        ]
        var parts = names.filter { contains($0.0) }.map(\.1)
        let unknown = rawValue & 0b1110_0000
        if unknown != 0 { parts.append("0x" + Hex.string([unknown])) }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
