/// IO Capability of a Pairing Request or Response (Core Vol 3 Part H 3.5.1, Table 3.4).
/// Reserved values decode (a peer may send them); pairing refuses them with Invalid
/// Parameters.
public struct IOCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible, CaseIterable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let displayOnly = IOCapability(rawValue: 0x00)
    public static let displayYesNo = IOCapability(rawValue: 0x01)
    public static let keyboardOnly = IOCapability(rawValue: 0x02)
    public static let noInputNoOutput = IOCapability(rawValue: 0x03)
    public static let keyboardDisplay = IOCapability(rawValue: 0x04)

    /// The five defined capabilities, in code order.
    public static let allCases: [IOCapability] = [.displayOnly, .displayYesNo, .keyboardOnly, .noInputNoOutput, .keyboardDisplay]

    public var isDefined: Bool { rawValue <= 0x04 }

    /// The command-line spelling: display-only, display-yesno, keyboard-only,
    /// no-input-no-output, keyboard-display.
    public init?(name: String) {
        guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = found
    }

    public var name: String {
        switch rawValue {
        case 0x00: "display-only"
        case 0x01: "display-yesno"
        case 0x02: "keyboard-only"
        case 0x03: "no-input-no-output"
        case 0x04: "keyboard-display"
        default: "reserved-0x\(String(rawValue, radix: 16))"
        }
    }

    public var description: String {
        switch rawValue {
        case 0x00: "DisplayOnly"
        case 0x01: "DisplayYesNo"
        case 0x02: "KeyboardOnly"
        case 0x03: "NoInputNoOutput"
        case 0x04: "KeyboardDisplay"
        default: "reserved IO capability 0x\(String(rawValue, radix: 16))"
        }
    }
}
