import BluetoothCore

/// The parameters of one ATT PDU type, declared once: its opcode and both directions.
///
/// `init(decoding:)` reads from a reader bounded to the parameters (everything after the
/// opcode) and must consume all of them; ``ATTPDU`` rejects bytes left over.
public protocol ATTPDUParameters: Sendable, Equatable {
    static var opcode: ATTOpcode { get }
    init(decoding reader: inout ByteReader) throws(DecodeError)
    func encode(into writer: inout ByteWriter)
}

/// One ATT PDU (Core 5.4 Vol 3 Part F 3.4), typed.
///
/// Opcodes this stack does not model decode to ``unknown(_:parameters:)`` with their bytes
/// kept: a server answers an unknown request with Request Not Supported and ignores an
/// unknown command (``ATTOpcode/isCommand``); the client ignores both. A modelled PDU whose
/// parameters are malformed throws a ``DecodeError``.
public enum ATTPDU: Sendable, Equatable {
    case errorResponse(ErrorResponse)
    case exchangeMTURequest(ExchangeMTURequest)
    case exchangeMTUResponse(ExchangeMTUResponse)
    case findInformationRequest(FindInformationRequest)
    case findInformationResponse(FindInformationResponse)
    case findByTypeValueRequest(FindByTypeValueRequest)
    case findByTypeValueResponse(FindByTypeValueResponse)
    case readByTypeRequest(ReadByTypeRequest)
    case readByTypeResponse(ReadByTypeResponse)
    case readRequest(ReadRequest)
    case readResponse(ReadResponse)
    case readBlobRequest(ReadBlobRequest)
    case readBlobResponse(ReadBlobResponse)
    case readMultipleRequest(ReadMultipleRequest)
    case readMultipleResponse(ReadMultipleResponse)
    case readByGroupTypeRequest(ReadByGroupTypeRequest)
    case readByGroupTypeResponse(ReadByGroupTypeResponse)
    case readMultipleVariableRequest(ReadMultipleVariableRequest)
    case readMultipleVariableResponse(ReadMultipleVariableResponse)
    case writeRequest(WriteRequest)
    case writeResponse(WriteResponse)
    case writeCommand(WriteCommand)
    case signedWriteCommand(SignedWriteCommand)
    case prepareWriteRequest(PrepareWriteRequest)
    case prepareWriteResponse(PrepareWriteResponse)
    case executeWriteRequest(ExecuteWriteRequest)
    case executeWriteResponse(ExecuteWriteResponse)
    case handleValueNotification(HandleValueNotification)
    case handleValueIndication(HandleValueIndication)
    case handleValueConfirmation(HandleValueConfirmation)
    case multipleHandleValueNotification(MultipleHandleValueNotification)
    case unknown(ATTOpcode, parameters: [UInt8])

    /// Decodes one PDU: opcode, then parameters to the end of `bytes`.
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        guard let first = bytes.first else { throw .truncated(needed: 1, available: 0) }
        var reader = ByteReader(bytes, range: 1..<bytes.count)
        self = try Self.decode(ATTOpcode(rawValue: first), &reader)
        try reader.expectEnd()
    }

    private static func decode(_ opcode: ATTOpcode, _ r: inout ByteReader) throws(DecodeError) -> ATTPDU {
        switch opcode {
        case .errorResponse: .errorResponse(try .init(decoding: &r))
        case .exchangeMTURequest: .exchangeMTURequest(try .init(decoding: &r))
        case .exchangeMTUResponse: .exchangeMTUResponse(try .init(decoding: &r))
        case .findInformationRequest: .findInformationRequest(try .init(decoding: &r))
        case .findInformationResponse: .findInformationResponse(try .init(decoding: &r))
        case .findByTypeValueRequest: .findByTypeValueRequest(try .init(decoding: &r))
        case .findByTypeValueResponse: .findByTypeValueResponse(try .init(decoding: &r))
        case .readByTypeRequest: .readByTypeRequest(try .init(decoding: &r))
        case .readByTypeResponse: .readByTypeResponse(try .init(decoding: &r))
        case .readRequest: .readRequest(try .init(decoding: &r))
        case .readResponse: .readResponse(try .init(decoding: &r))
        case .readBlobRequest: .readBlobRequest(try .init(decoding: &r))
        case .readBlobResponse: .readBlobResponse(try .init(decoding: &r))
        case .readMultipleRequest: .readMultipleRequest(try .init(decoding: &r))
        case .readMultipleResponse: .readMultipleResponse(try .init(decoding: &r))
        case .readByGroupTypeRequest: .readByGroupTypeRequest(try .init(decoding: &r))
        case .readByGroupTypeResponse: .readByGroupTypeResponse(try .init(decoding: &r))
        case .readMultipleVariableRequest: .readMultipleVariableRequest(try .init(decoding: &r))
        case .readMultipleVariableResponse: .readMultipleVariableResponse(try .init(decoding: &r))
        case .writeRequest: .writeRequest(try .init(decoding: &r))
        case .writeResponse: .writeResponse(try .init(decoding: &r))
        case .writeCommand: .writeCommand(try .init(decoding: &r))
        case .signedWriteCommand: .signedWriteCommand(try .init(decoding: &r))
        case .prepareWriteRequest: .prepareWriteRequest(try .init(decoding: &r))
        case .prepareWriteResponse: .prepareWriteResponse(try .init(decoding: &r))
        case .executeWriteRequest: .executeWriteRequest(try .init(decoding: &r))
        case .executeWriteResponse: .executeWriteResponse(try .init(decoding: &r))
        case .handleValueNotification: .handleValueNotification(try .init(decoding: &r))
        case .handleValueIndication: .handleValueIndication(try .init(decoding: &r))
        case .handleValueConfirmation: .handleValueConfirmation(try .init(decoding: &r))
        case .multipleHandleValueNotification: .multipleHandleValueNotification(try .init(decoding: &r))
        default: .unknown(opcode, parameters: r.readRemaining())
        }
    }

    /// The parameters this value holds as their declaration, or an unknown PDU's bytes.
    var body: Body {
        switch self {
        case .errorResponse(let p): .declared(p)
        case .exchangeMTURequest(let p): .declared(p)
        case .exchangeMTUResponse(let p): .declared(p)
        case .findInformationRequest(let p): .declared(p)
        case .findInformationResponse(let p): .declared(p)
        case .findByTypeValueRequest(let p): .declared(p)
        case .findByTypeValueResponse(let p): .declared(p)
        case .readByTypeRequest(let p): .declared(p)
        case .readByTypeResponse(let p): .declared(p)
        case .readRequest(let p): .declared(p)
        case .readResponse(let p): .declared(p)
        case .readBlobRequest(let p): .declared(p)
        case .readBlobResponse(let p): .declared(p)
        case .readMultipleRequest(let p): .declared(p)
        case .readMultipleResponse(let p): .declared(p)
        case .readByGroupTypeRequest(let p): .declared(p)
        case .readByGroupTypeResponse(let p): .declared(p)
        case .readMultipleVariableRequest(let p): .declared(p)
        case .readMultipleVariableResponse(let p): .declared(p)
        case .writeRequest(let p): .declared(p)
        case .writeResponse(let p): .declared(p)
        case .writeCommand(let p): .declared(p)
        case .signedWriteCommand(let p): .declared(p)
        case .prepareWriteRequest(let p): .declared(p)
        case .prepareWriteResponse(let p): .declared(p)
        case .executeWriteRequest(let p): .declared(p)
        case .executeWriteResponse(let p): .declared(p)
        case .handleValueNotification(let p): .declared(p)
        case .handleValueIndication(let p): .declared(p)
        case .handleValueConfirmation(let p): .declared(p)
        case .multipleHandleValueNotification(let p): .declared(p)
        case .unknown(let opcode, let bytes): .raw(opcode, bytes)
        }
    }

    enum Body {
        case declared(any ATTPDUParameters)
        case raw(ATTOpcode, [UInt8])
    }

    /// The opcode this value encodes with.
    public var opcode: ATTOpcode {
        switch body {
        case .declared(let parameters): type(of: parameters).opcode
        case .raw(let opcode, _): opcode
        }
    }

    /// The PDU's bytes: opcode, then parameters.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writer.write(opcode.rawValue)
        switch body {
        case .declared(let parameters): parameters.encode(into: &writer)
        case .raw(_, let bytes): writer.write(contentsOf: bytes)
        }
        return writer.bytes
    }
}

extension ATTPDUParameters {
    /// This PDU's bytes: opcode, then parameters.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writer.write(Self.opcode.rawValue)
        encode(into: &writer)
        return writer.bytes
    }

    /// Decodes this PDU type from complete PDU bytes, opcode included; any other opcode
    /// or bytes left over are errors.
    public init(decodingPDU bytes: [UInt8]) throws(DecodeError) {
        guard let first = bytes.first else { throw .truncated(needed: 1, available: 0) }
        guard first == Self.opcode.rawValue else { throw .invalidValue(field: "ATT opcode", value: Int(first)) }
        var reader = ByteReader(bytes, range: 1..<bytes.count)
        try self.init(decoding: &reader)
        try reader.expectEnd()
    }
}
