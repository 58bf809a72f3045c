import ATT
import BluetoothCore

/// Why a GATT client procedure did not complete.
public enum GATTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The ATT request failed: an Error Response (with the specification's code, e.g.
    /// ``ATTErrorCode/insufficientEncryption`` or ``ATTErrorCode/insufficientAuthentication``,
    /// which pairing acts on), a disconnection (``ATTError/bearerClosed(_:)`` with the HCI
    /// reason), or the transaction timeout.
    case att(ATTError)
    /// A Prepare Write Response did not echo what was sent (Part G 4.9.5): the queue was
    /// cancelled with Execute Write (flags 0x00) and nothing was written.
    case preparedWriteEchoMismatch(handle: UInt16, offset: UInt16)
    /// The server's answer is well-formed ATT but not valid GATT (a declaration that does
    /// not decode, a discovery that does not advance); the text says what.
    case invalidResponse(String)
    /// The characteristic cannot do what was asked (no CCCD to subscribe with, a value
    /// longer than 512 bytes, ...); the text says why.
    case invalidRequest(String)
    /// The procedure (named) did not finish within the client's
    /// ``GATTClient/procedureTimeout``, although each request may have been answered in
    /// time: a server that stretches a discovery or a long read out, or a very slow link.
    case procedureTimedOut(String, after: Duration)

    /// The ATT Error Response's code, when that is what this error is.
    public var errorCode: ATTErrorCode? {
        if case .att(let error) = self { return error.errorCode }
        return nil
    }

    public var description: String {
        switch self {
        case .att(let error): "\(error)"
        case let .preparedWriteEchoMismatch(handle, offset):
            "the server echoed a different value for the prepared write at handle 0x\(hex16(handle)), offset \(offset); the queued writes were cancelled"
        case .invalidResponse(let why): "invalid GATT response: \(why)"
        case .invalidRequest(let why): "invalid GATT request: \(why)"
        case let .procedureTimedOut(name, after):
            "\(name) did not finish within \(after): the server answers too slowly or never ends it; disconnect, or for a very slow link give a longer procedureTimeout (GATTClient's, or Central.connect's)"
        }
    }
}

extension ATTError {
    /// True for the Error Response that ends a discovery chain.
    var isAttributeNotFound: Bool { errorCode == .attributeNotFound }
}
