import BluetoothCore
import Glibc
import HCITransport

/// Why a kernel L2CAP socket could not connect, listen, secure or carry data. Every
/// case's text says what to do next.
public enum KernelSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kernel has no AF_BLUETOOTH.
    case noBluetoothInKernel
    /// Listing or choosing the adapter failed; the text says why.
    case adapter(String)
    /// CAP_NET_RAW or CAP_NET_ADMIN is missing for `operation`.
    case permissionDenied(operation: String)
    /// The peer did not answer (not advertising connectably, out of range) or refused.
    case connectFailed(peer: DeviceAddress, detail: String)
    /// A deadline passed.
    case timedOut(peer: DeviceAddress?, waitingFor: String, after: Duration)
    /// The kernel could not reach the security level (pairing failed or was refused).
    case securityFailed(peer: DeviceAddress, level: KernelL2CAPSocket.SecurityLevel)
    /// The kernel has no SMP for this adapter: it registers it only when the adapter is
    /// powered on through the management interface.
    case securityUnavailable
    /// The link broke while in use.
    case linkFailed(peer: DeviceAddress, detail: String)
    /// The link ended with this HCI reason, as far as the socket's errno tells it (the
    /// kernel turns the reason into an errno: `bt_to_errno`).
    case linkEnded(peer: DeviceAddress, reason: UInt8)
    /// Another socket already has this channel on this adapter (EADDRINUSE).
    case channelInUse(operation: String)
    /// The listener was closed (``KernelL2CAPListener/close()``): it accepts no more links.
    case listenerClosed
    /// Any other system call failure.
    case system(operation: String, errno: Int32, detail: String)

    public var description: String {
        switch self {
        case .noBluetoothInKernel:
            return "this kernel has no Bluetooth support (no AF_BLUETOOTH): use tcp:/serial: or the virtual radio"
        case let .adapter(text):
            return text
        case let .permissionDenied(operation):
            return "\(operation) needs CAP_NET_RAW: run as root or grant it with `sudo setcap cap_net_admin,cap_net_raw+ep PROGRAM`"
        case let .connectFailed(peer, detail):
            return "cannot connect to \(peer): \(detail): is it advertising connectably and in range?"
        case let .timedOut(peer, waitingFor, after):
            let seconds = Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
            return "\(peer.map { "\($0): " } ?? "")timed out after \(seconds) s waiting for \(waitingFor)"
        case let .securityFailed(peer, level):
            return "\(peer): the kernel could not reach security level \(level) (pairing failed or was rejected): "
                + "check the peer accepts pairing and that the passkey or number comparison was answered right "
                + "(high and fips need a pairing delegate); a key the peer lost is removed "
                + "with `bareble-central bonds remove PEER` (store and kernel; KernelManagement.unpair for the kernel alone)"
        case .securityUnavailable:
            return "the kernel cannot pair on this adapter: it was brought up without the management interface "
                + "(HCIDEVUP), so the kernel's SMP is missing: power it on with `bareble-central adapters --up N` "
                + "(KernelManagement.powerOnManaged)"
        case let .linkFailed(peer, detail):
            return "\(peer): the link failed: \(detail)"
        case let .linkEnded(peer, reason):
            return "\(peer): the link ended (HCI reason 0x\(String(reason, radix: 16, uppercase: true)))"
        case let .channelInUse(operation):
            return "\(operation): another socket already serves this channel on this adapter (bluetoothd?): stop it"
        case .listenerClosed:
            return "the listening socket was closed: no more centrals are accepted"
        case let .system(operation, code, detail):
            return "\(operation) failed: \(detail) (errno \(code))"
        }
    }

    static func from(errno code: Int32, operation: String, peer: DeviceAddress?) -> KernelSocketError {
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: return .noBluetoothInKernel
        case EPERM, EACCES: return .permissionDenied(operation: operation)
        case EADDRINUSE: return .channelInUse(operation: operation)
        case EHOSTDOWN, EHOSTUNREACH, ECONNREFUSED, ECONNRESET, ETIMEDOUT, ECONNABORTED:
            if let peer { return .connectFailed(peer: peer, detail: Posix.message(code)) }
        default: break
        }
        return .system(operation: operation, errno: code, detail: Posix.message(code))
    }
}
