import BluetoothCore

/// The Error Code of an Error Response (Core 5.4 Vol 3 Part F 3.4.1.1, table 3.4), plus
/// the application range and the common profile and service error codes (Core
/// Specification Supplement Part B 1.2).
///
/// An `Error` too, so a server's store or an application handler can throw the code to answer
/// with.
///
/// An open struct, because a server may send codes this stack does not know (reserved
/// today, assigned tomorrow) and they must still reach the caller unchanged.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)

    /// Codes a higher layer (an application or profile) defines for itself.
    public static let applicationErrors: ClosedRange<UInt8> = 0x80...0x9F
    /// Codes shared by all profiles and services (Supplement Part B 1.2).
    public static let commonProfileAndServiceErrors: ClosedRange<UInt8> = 0xE0...0xFF

    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    public static let clientCharacteristicConfigurationDescriptorImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)

    /// Every code with a name, in numeric order.
    public static let named: [ATTErrorCode] = (0x01...0x13).map { ATTErrorCode(rawValue: $0) }
        + (0xFC...0xFF).map { ATTErrorCode(rawValue: $0) }

    public var isApplicationError: Bool { Self.applicationErrors.contains(rawValue) }
    public var isCommonProfileAndServiceError: Bool { Self.commonProfileAndServiceErrors.contains(rawValue) }

    /// The specification's name, or what range an unnamed code lies in.
    public var name: String {
        switch rawValue {
        case 0x01: "Invalid Handle"
        case 0x02: "Read Not Permitted"
        case 0x03: "Write Not Permitted"
        case 0x04: "Invalid PDU"
        case 0x05: "Insufficient Authentication"
        case 0x06: "Request Not Supported"
        case 0x07: "Invalid Offset"
        case 0x08: "Insufficient Authorization"
        case 0x09: "Prepare Queue Full"
        case 0x0A: "Attribute Not Found"
        case 0x0B: "Attribute Not Long"
        case 0x0C: "Encryption Key Size Too Short"
        case 0x0D: "Invalid Attribute Value Length"
        case 0x0E: "Unlikely Error"
        case 0x0F: "Insufficient Encryption"
        case 0x10: "Unsupported Group Type"
        case 0x11: "Insufficient Resources"
        case 0x12: "Database Out Of Sync"
        case 0x13: "Value Not Allowed"
        case 0xFC: "Write Request Rejected"
        case 0xFD: "Client Characteristic Configuration Descriptor Improperly Configured"
        case 0xFE: "Procedure Already in Progress"
        case 0xFF: "Out of Range"
        case Self.applicationErrors: "Application Error"
        case Self.commonProfileAndServiceErrors: "Common Profile and Service Error"
        default: "Reserved"
        }
    }

    public var description: String { "\(name) (0x\(Hex.string([rawValue])))" }
}
