import BluetoothCore

/// Why an ATT request or command did not produce its result.
public enum ATTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with an Error Response. `code` is what the GATT layer acts on,
    /// e.g. ``ATTErrorCode/insufficientEncryption`` to pair and retry.
    case errorResponse(request: ATTOpcode, handle: UInt16, code: ATTErrorCode)
    /// No response arrived within the transaction timeout. The bearer is now dead and closed.
    case transactionTimedOut(request: ATTOpcode, timeout: Duration)
    /// The peer answered with a PDU that is not this request's response. The bearer is now
    /// dead and closed.
    case unexpectedResponse(request: ATTOpcode, received: ATTOpcode)
    /// The response had the right opcode but its parameters do not decode. The transaction
    /// is over and the bearer stays usable.
    case malformedResponse(request: ATTOpcode, DecodeError)
    /// The bearer cannot carry PDUs any more (disconnected, closed, or dead after an
    /// earlier timeout or protocol violation).
    case bearerClosed(ATTBearerError)
    /// The PDU would be longer than the bearer's ATT_MTU.
    case pduExceedsMTU(ATTOpcode, length: Int, mtu: UInt16)
    /// The request cannot be made as asked; the text says why.
    case invalidRequest(String)
    /// The calling task was cancelled. A request already sent still occupies the bearer
    /// until its response or its timeout, because ATT cannot withdraw a request.
    case cancelled(request: ATTOpcode)
    /// The procedure's overall deadline (``ATTProcedureDeadline``) passed before this
    /// request was answered. One already sent still occupies the bearer until its response
    /// or its timeout.
    case procedureDeadlinePassed(request: ATTOpcode)

    /// The Error Response's code, when that is what this error is.
    public var errorCode: ATTErrorCode? {
        if case .errorResponse(_, _, let code) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case let .errorResponse(request, handle, code):
            return "the server refused \(request.name) at handle 0x\(Hex.string([UInt8(handle >> 8), UInt8(handle & 0xFF)])): \(code)"
        case let .transactionTimedOut(request, timeout):
            return "the peer did not answer \(request.name) within \(timeout); the ATT bearer is dead: reconnect to talk to it again"
        case let .unexpectedResponse(request, received):
            return "the peer answered \(request.name) with \(received.name); the ATT bearer was closed: reconnect to talk to it again"
        case let .malformedResponse(request, error):
            return "the peer's answer to \(request.name) is malformed (\(error))"
        case .bearerClosed(let reason):
            return "\(reason)"
        case let .pduExceedsMTU(opcode, length, mtu):
            return "\(opcode.name) would be \(length) bytes, more than the ATT_MTU of \(mtu): exchange a larger MTU or send less (long writes use Prepare Write)"
        case .invalidRequest(let why):
            return "invalid ATT request: \(why)"
        case .cancelled(let request):
            return "\(request.name) was cancelled"
        case .procedureDeadlinePassed(let request):
            return "the procedure's deadline passed before the peer answered \(request.name)"
        }
    }
}
