import BluetoothCore

/// Why a connection could not be made, or an operation on one did not finish.
public enum ConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer did not answer before the deadline. The attempt was cancelled on the
    /// controller (and a connection made in the race was disconnected) before this was thrown.
    case timedOut(DeviceAddress, after: Duration)
    /// The connecting task was cancelled; the attempt was cleaned up as for a timeout.
    case cancelled(DeviceAddress)
    /// The controller ended the attempt with this status (LE Connection Complete).
    case failed(DeviceAddress, HCIErrorCode)
    /// The controller did not end the attempt after LE Create Connection Cancel. It may
    /// still be initiating; new attempts are refused by it until it stops.
    case cancelNotConfirmed(DeviceAddress)
    /// The connection ended (Disconnection Complete with this reason, or a controller
    /// reset) while the operation was pending, or before it started.
    case disconnected(reason: HCIErrorCode)
    /// The event that ends `procedure` did not arrive before the deadline.
    case procedureTimedOut(String, after: Duration)
    /// The task waiting for `procedure` was cancelled; the controller may still finish it.
    case procedureCancelled(String)
    /// Parameters the specification does not allow; the text says which and why.
    case invalidParameters(String)
    /// The controller lacks a command or feature this needs.
    case unsupported(String)
    /// ``HCIController/powerOn()`` has not completed, so the controller's abilities are unknown.
    case controllerNotReady
    /// The controller refused a command, did not answer, or went away.
    case controller(HCIError)
    /// Encryption did not start: Encryption Change carried this status (0x06 PIN or Key
    /// Missing when the peer has no key, 0x3D MIC Failure when the keys differ).
    case encryptionFailed(HCIErrorCode)
    /// The link is encrypted, but with fewer key octets than the minimum asked for.
    case encryptionKeyTooShort(Int, minimum: Int)

    public var description: String {
        switch self {
        case let .timedOut(peer, after):
            return "no connection to \(peer): the device did not answer within \(Self.text(after)); is it advertising connectably and in range?"
        case let .cancelled(peer):
            return "connecting to \(peer) was cancelled"
        case let .failed(peer, status) where status == .connectionFailedToBeEstablished:
            return "no connection to \(peer): \(status); the link did not come up, usually from interference or range: try again closer"
        case let .failed(peer, status):
            return "no connection to \(peer): the controller reported \(status)"
        case let .cancelNotConfirmed(peer):
            return "connecting to \(peer) was cancelled, but the controller did not confirm it: reset the controller before connecting again"
        case let .disconnected(reason):
            return "the connection is closed (\(reason)): connect again"
        case let .procedureTimedOut(procedure, after):
            return "\(procedure) did not finish within \(Self.text(after)): the link may be failing; disconnect and connect again"
        case let .procedureCancelled(procedure):
            return "waiting for \(procedure) was cancelled"
        case let .invalidParameters(text):
            return text
        case let .unsupported(what):
            return "the controller does not support \(what)"
        case .controllerNotReady:
            return "the controller is not powered on: call powerOn() before connecting"
        case let .controller(error):
            return "\(error)"
        case let .encryptionFailed(status):
            return "the link could not be encrypted (\(status)): the peer may have lost its keys; pair again"
        case let .encryptionKeyTooShort(size, minimum):
            return "the link is encrypted with a \(size)-octet key, below the minimum of \(minimum): do not trust it; disconnect"
        }
    }

    /// "10 s", "500 ms".
    static func text(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
