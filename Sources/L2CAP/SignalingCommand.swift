import BluetoothCore

/// A signaling command code on the LE signaling channel (Core Vol 3 Part A 4, Table 4.2).
public struct SignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = SignalingCode(rawValue: 0x01)
    public static let disconnectionRequest = SignalingCode(rawValue: 0x06)
    public static let disconnectionResponse = SignalingCode(rawValue: 0x07)
    public static let connectionParameterUpdateRequest = SignalingCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = SignalingCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = SignalingCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = SignalingCode(rawValue: 0x15)
    public static let flowControlCreditIndication = SignalingCode(rawValue: 0x16)
    public static let creditBasedConnectionRequest = SignalingCode(rawValue: 0x17)
    public static let creditBasedConnectionResponse = SignalingCode(rawValue: 0x18)
    public static let creditBasedReconfigureRequest = SignalingCode(rawValue: 0x19)
    public static let creditBasedReconfigureResponse = SignalingCode(rawValue: 0x1A)

    /// Requests of the credit-based channel procedures, which BareBLE recognises but does
    /// not implement: they are answered with Command Reject.
    public static let creditBasedRequests: Set<SignalingCode> = [
        .leCreditBasedConnectionRequest, .creditBasedConnectionRequest, .creditBasedReconfigureRequest,
    ]

    /// Responses and indications: never answered, because the peer expects no answer and a
    /// reject of a reject would loop.
    public static let responsesAndIndications: Set<SignalingCode> = [
        .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse,
        .leCreditBasedConnectionResponse, .flowControlCreditIndication,
        .creditBasedConnectionResponse, .creditBasedReconfigureResponse,
    ]

    public var description: String {
        switch self {
        case .commandReject: "L2CAP_COMMAND_REJECT_RSP"
        case .disconnectionRequest: "L2CAP_DISCONNECTION_REQ"
        case .disconnectionResponse: "L2CAP_DISCONNECTION_RSP"
        case .connectionParameterUpdateRequest: "L2CAP_CONNECTION_PARAMETER_UPDATE_REQ"
        case .connectionParameterUpdateResponse: "L2CAP_CONNECTION_PARAMETER_UPDATE_RSP"
        case .leCreditBasedConnectionRequest: "L2CAP_LE_CREDIT_BASED_CONNECTION_REQ"
        case .leCreditBasedConnectionResponse: "L2CAP_LE_CREDIT_BASED_CONNECTION_RSP"
        case .flowControlCreditIndication: "L2CAP_FLOW_CONTROL_CREDIT_IND"
        case .creditBasedConnectionRequest: "L2CAP_CREDIT_BASED_CONNECTION_REQ"
        case .creditBasedConnectionResponse: "L2CAP_CREDIT_BASED_CONNECTION_RSP"
        case .creditBasedReconfigureRequest: "L2CAP_CREDIT_BASED_RECONFIGURE_REQ"
        case .creditBasedReconfigureResponse: "L2CAP_CREDIT_BASED_RECONFIGURE_RSP"
        default: "signaling code 0x\(Hex.string([rawValue]))"
        }
    }
}

/// One signaling command (Core Vol 3 Part A 4): code, identifier, length, data. On LE-U a
/// C-frame carries exactly one command, so the length must account for every byte.
public struct SignalingCommand: Sendable, Equatable {
    public static let headerSize = 4

    public var code: SignalingCode
    /// Matches a response to its request; 0x00 is never valid.
    public var identifier: UInt8
    public var data: [UInt8]

    public init(code: SignalingCode, identifier: UInt8, data: [UInt8]) {
        self.code = code
        self.identifier = identifier
        self.data = data
    }

    /// Decodes the payload of one LE signaling C-frame.
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        code = SignalingCode(rawValue: try reader.readUInt8())
        identifier = try reader.readUInt8()
        let length = Int(try reader.readUInt16())
        guard length == reader.remaining else {
            throw .lengthMismatch(declared: length, actual: reader.remaining)
        }
        data = reader.readRemaining()
    }

    /// The C-frame payload. Data longer than 65535 bytes is cut (no signaling command
    /// comes near it).
    public func encode() -> [UInt8] {
        let body = data.prefix(Int(UInt16.max))
        var writer = ByteWriter(capacity: Self.headerSize + body.count)
        writer.write(code.rawValue)
        writer.write(identifier)
        writer.write(UInt16(body.count))
        writer.write(contentsOf: body)
        return writer.bytes
    }
}

/// The data of one signaling command type, declared once for both directions.
public protocol SignalingCommandData: Sendable, Equatable {
    static var code: SignalingCode { get }
    /// Decodes the command's data field; must consume all of it.
    init(decoding data: [UInt8]) throws(DecodeError)
    func encode() -> [UInt8]
}

extension SignalingCommand {
    /// A command carrying `value`.
    public init<Data: SignalingCommandData>(identifier: UInt8, _ value: Data) {
        self.init(code: Data.code, identifier: identifier, data: value.encode())
    }

    /// The data decoded as `type`; throws when the code differs or the data is malformed.
    public func decode<Data: SignalingCommandData>(_ type: Data.Type) throws(DecodeError) -> Data {
        guard code == Data.code else { throw .invalidValue(field: "signaling code", value: Int(code.rawValue)) }
        return try Data(decoding: data)
    }
}
