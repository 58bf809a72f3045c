import BluetoothCore

/// An ATT PDU's first byte (Core 5.4 Vol 3 Part F 3.3.1): a 6-bit method, the Command Flag
/// (bit 6) and the Authentication Signature Flag (bit 7).
///
/// An open struct rather than an enum, because a peer may send any byte here: opcodes this
/// stack does not model still need their flags read, so a server can tell an unknown
/// request (answered with Request Not Supported) from an unknown command (ignored).
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandFlag: UInt8 = 0x40
    public static let authenticationSignatureFlag: UInt8 = 0x80

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    public static let multipleHandleValueNotification = ATTOpcode(rawValue: 0x23)
    /// Write Request's method with the Command Flag.
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    /// Write Request's method with both the Command and Authentication Signature Flags.
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)

    /// Bits 0-5.
    public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: the sender expects no response, and a receiver that does not understand the
    /// PDU must ignore it rather than answer with an error.
    public var isCommand: Bool { rawValue & Self.commandFlag != 0 }
    /// Bit 7: an Authentication Signature (12 bytes) ends the PDU.
    public var hasAuthenticationSignature: Bool { rawValue & Self.authenticationSignatureFlag != 0 }

    /// The role a PDU plays in the protocol (Vol 3 Part F 3.3).
    public enum Kind: Sendable, Hashable {
        case request, response, command, notification, indication, confirmation
    }

    /// What this opcode is: the modelled ones by definition, others from the Command Flag
    /// (with it a command; without it nothing can be said, so nil).
    public var kind: Kind? {
        switch self {
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
             .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse,
             .readByGroupTypeResponse, .writeResponse, .prepareWriteResponse, .executeWriteResponse,
             .readMultipleVariableResponse:
            return .response
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
             .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest,
             .prepareWriteRequest, .executeWriteRequest, .readMultipleVariableRequest:
            return .request
        case .handleValueNotification, .multipleHandleValueNotification: return .notification
        case .handleValueIndication: return .indication
        case .handleValueConfirmation: return .confirmation
        default: return isCommand ? .command : nil
        }
    }

    /// The response that completes this request (each request's response is the next
    /// opcode), or nil when this is not a modelled request.
    public var responseOpcode: ATTOpcode? {
        kind == .request ? ATTOpcode(rawValue: rawValue + 1) : nil
    }

    /// The specification's name ("Read By Group Type Request").
    public var name: String {
        switch self {
        case .errorResponse: "Error Response"
        case .exchangeMTURequest: "Exchange MTU Request"
        case .exchangeMTUResponse: "Exchange MTU Response"
        case .findInformationRequest: "Find Information Request"
        case .findInformationResponse: "Find Information Response"
        case .findByTypeValueRequest: "Find By Type Value Request"
        case .findByTypeValueResponse: "Find By Type Value Response"
        case .readByTypeRequest: "Read By Type Request"
        case .readByTypeResponse: "Read By Type Response"
        case .readRequest: "Read Request"
        case .readResponse: "Read Response"
        case .readBlobRequest: "Read Blob Request"
        case .readBlobResponse: "Read Blob Response"
        case .readMultipleRequest: "Read Multiple Request"
        case .readMultipleResponse: "Read Multiple Response"
        case .readByGroupTypeRequest: "Read By Group Type Request"
        case .readByGroupTypeResponse: "Read By Group Type Response"
        case .writeRequest: "Write Request"
        case .writeResponse: "Write Response"
        case .prepareWriteRequest: "Prepare Write Request"
        case .prepareWriteResponse: "Prepare Write Response"
        case .executeWriteRequest: "Execute Write Request"
        case .executeWriteResponse: "Execute Write Response"
        case .handleValueNotification: "Handle Value Notification"
        case .handleValueIndication: "Handle Value Indication"
        case .handleValueConfirmation: "Handle Value Confirmation"
        case .readMultipleVariableRequest: "Read Multiple Variable Request"
        case .readMultipleVariableResponse: "Read Multiple Variable Response"
        case .multipleHandleValueNotification: "Multiple Handle Value Notification"
        case .writeCommand: "Write Command"
        case .signedWriteCommand: "Signed Write Command"
        default: "unknown ATT opcode"
        }
    }

    public var description: String {
        "\(name) (0x\(Hex.string([rawValue])))"
    }
}
