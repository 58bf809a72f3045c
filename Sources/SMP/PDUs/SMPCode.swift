/// The first octet of every SMP PDU (Core Vol 3 Part H 3.3, Table 3.3).
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let pairingRequest = SMPCode(rawValue: 0x01)
    public static let pairingResponse = SMPCode(rawValue: 0x02)
    public static let pairingConfirm = SMPCode(rawValue: 0x03)
    public static let pairingRandom = SMPCode(rawValue: 0x04)
    public static let pairingFailed = SMPCode(rawValue: 0x05)
    public static let encryptionInformation = SMPCode(rawValue: 0x06)
    public static let centralIdentification = SMPCode(rawValue: 0x07)
    public static let identityInformation = SMPCode(rawValue: 0x08)
    public static let identityAddressInformation = SMPCode(rawValue: 0x09)
    public static let signingInformation = SMPCode(rawValue: 0x0A)
    public static let securityRequest = SMPCode(rawValue: 0x0B)
    public static let pairingPublicKey = SMPCode(rawValue: 0x0C)
    public static let pairingDHKeyCheck = SMPCode(rawValue: 0x0D)
    public static let pairingKeypressNotification = SMPCode(rawValue: 0x0E)

    /// Whether the specification defines this code for LE (0x01 ... 0x0E).
    public var isDefined: Bool { (0x01...0x0E).contains(rawValue) }

    /// The length of the whole PDU, code included: every SMP PDU has a fixed size.
    public var pduLength: Int? {
        switch rawValue {
        case 0x01, 0x02: 7
        case 0x03, 0x04, 0x06, 0x08, 0x0A, 0x0D: 17
        case 0x05, 0x0B, 0x0E: 2
        case 0x07: 11
        case 0x09: 8
        case 0x0C: 65
        default: nil
        }
    }

    public var description: String {
        switch rawValue {
        case 0x01: "Pairing Request"
        case 0x02: "Pairing Response"
        case 0x03: "Pairing Confirm"
        case 0x04: "Pairing Random"
        case 0x05: "Pairing Failed"
        case 0x06: "Encryption Information"
        case 0x07: "Central Identification"
        case 0x08: "Identity Information"
        case 0x09: "Identity Address Information"
        case 0x0A: "Signing Information"
        case 0x0B: "Security Request"
        case 0x0C: "Pairing Public Key"
        case 0x0D: "Pairing DHKey Check"
        case 0x0E: "Pairing Keypress Notification"
        default: "SMP code 0x\(String(rawValue, radix: 16))"
        }
    }
}
