/// Why the iPhone refused a Control Point write: ANCS's own error codes (ANCS
/// specification, "Error Codes"), ATT's Write Not Permitted (notification sharing is off
/// for this accessory), or any other ATT error.
public enum ControlPointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 0xA0: the command ID is not one the iPhone knows.
    case unknownCommand
    /// 0xA1: the command is malformed.
    case invalidCommand
    /// 0xA2: a parameter (a UID, an app identifier) names nothing.
    case invalidParameter
    /// 0xA3: the action could not be performed.
    case actionFailed
    /// ATT 0x03 (Write Not Permitted): iOS answers this until the user lets this accessory
    /// see notifications.
    case notificationSharingNotAllowed
    /// Any other ATT error code.
    case attError(UInt8)

    /// Classifies the ATT error code of a failed Control Point write.
    public init(attErrorCode code: UInt8) {
        switch code {
        case 0xA0: self = .unknownCommand
        case 0xA1: self = .invalidCommand
        case 0xA2: self = .invalidParameter
        case 0xA3: self = .actionFailed
        case 0x03: self = .notificationSharingNotAllowed
        default: self = .attError(code)
        }
    }

    public var attErrorCode: UInt8 {
        switch self {
        case .unknownCommand: 0xA0
        case .invalidCommand: 0xA1
        case .invalidParameter: 0xA2
        case .actionFailed: 0xA3
        case .notificationSharingNotAllowed: 0x03
        case let .attError(code): code
        }
    }

    public var description: String {
        switch self {
        case .unknownCommand: "the iPhone does not know this ANCS command (0xA0 Unknown Command)"
        case .invalidCommand: "the iPhone found this ANCS command malformed (0xA1 Invalid Command)"
        case .invalidParameter: "the iPhone knows no such notification or app (0xA2 Invalid Parameter)"
        case .actionFailed: "the iPhone could not perform the action (0xA3 Action Failed)"
        case .notificationSharingNotAllowed: Self.sharingNotAllowedAdvice(deviceName: nil)
        case let .attError(code): "the iPhone refused the Control Point write (ATT error 0x\(String(code, radix: 16, uppercase: true)))"
        }
    }

    /// What the user does on the iPhone when it answers Write Not Permitted: iOS shares
    /// notifications with an accessory only after the user allowed it, at pairing or later.
    public static func sharingNotAllowedAdvice(deviceName: String?) -> String {
        let device = deviceName.map { "\"\($0)\"" } ?? "this device"
        return "the iPhone does not share its notifications with \(device) (ATT error 0x03 on the ANCS Control Point). "
            + "On the iPhone, open Settings > Bluetooth, tap (i) next to \(device) and turn on Share System Notifications, "
            + "or answer Allow when the iPhone asks whether \(device) may receive your notifications."
    }
}
