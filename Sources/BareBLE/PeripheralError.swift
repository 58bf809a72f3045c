import ATT
import BluetoothCore
import GATT
import HCI

/// Why an operation on a ``Peripheral`` (or connecting to one) did not complete. The lower
/// layers' errors are kept whole; the accessors answer the questions a program asks.
public enum PeripheralError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection could not be made, or a link-layer procedure failed.
    case connection(ConnectionError)
    /// A GATT procedure failed: an ATT Error Response (``GATTError/errorCode``), the link
    /// ending (``disconnectReason``), the ATT transaction timeout, a server answer that is
    /// not valid GATT.
    case gatt(GATTError)
    /// The object does not belong to this peripheral's current database (it was removed by
    /// Service Changed, or comes from another peripheral).
    case unknownAttribute(String)
    /// The characteristic cannot do what was asked; the text says why.
    case notSupported(String)

    /// The ATT Error Response code, when the server refused.
    public var errorCode: ATTErrorCode? {
        if case .gatt(let error) = self { return error.errorCode }
        return nil
    }

    /// The HCI reason when the operation failed because the link ended.
    public var disconnectReason: HCIErrorCode? {
        switch self {
        case .gatt(.att(.bearerClosed(.disconnected(let reason)))): HCIErrorCode(rawValue: reason)
        case .connection(.disconnected(let reason)): reason
        default: nil
        }
    }

    /// True when the server wants a more secure link first (Insufficient Authentication,
    /// Encryption or Encryption Key Size): pairing, then a retry, is the answer.
    public var needsPairing: Bool {
        guard let code = errorCode else { return false }
        return code == .insufficientAuthentication || code == .insufficientEncryption || code == .encryptionKeySizeTooShort
    }

    public var description: String {
        switch self {
        case .connection(let error): "\(error)"
        case .gatt(let error) where needsPairing:
            "\(error): the peer allows this only over an encrypted link; pair with it first (BareBLE cannot pair yet)"
        case .gatt(let error): "\(error)"
        case .unknownAttribute(let what): "\(what) is not in this peripheral's database: discover services again"
        case .notSupported(let why): why
        }
    }
}
