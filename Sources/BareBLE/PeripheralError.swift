import ATT
import BluetoothCore
import Bonding
import GATT
import HCI
import KernelHost
import L2CAP
import SMP

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
    /// Pairing or encryption failed (our SMP): refused with a reason, timed out, or the
    /// stored bond's key did not work (``PairingError/reencryptionFailed(_:)``: the link is
    /// never left silently unencrypted).
    case security(PairingError)
    /// The kernel's L2CAP socket could not connect, secure the link or carry data
    /// (`hci-raw:N`).
    case kernelSocket(KernelSocketError)
    /// Pairing succeeded but its bond could not be written; the link is secured for now
    /// only.
    case bondNotSaved(BondStoreError)
    /// An L2CAP signaling request of ours (the peripheral's Connection Parameter Update
    /// Request) was refused, timed out or could not be sent.
    case signaling(L2CAPError)

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
        case .security(.disconnected(let reason)): reason
        case .signaling(.disconnected(let reason)): reason
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
            "\(error): the peer allows this only over an encrypted link: pair with it first (`bareble-central pair`, or Peripheral.pair())"
        case .gatt(let error): "\(error)"
        case .unknownAttribute(let what): "\(what) is not in this peripheral's database: discover services again"
        case .notSupported(let why): why
        case .security(let error): "\(error)"
        case .kernelSocket(let error): "\(error)"
        case .bondNotSaved(let error): "paired, but the bond was not saved: \(error)"
        case .signaling(let error): "\(error)"
        }
    }
}
