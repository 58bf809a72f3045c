import BluetoothCore
import HCI

/// Why an L2CAP operation did not complete.
public enum L2CAPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No LE connection with this handle is known (never connected, or already gone).
    case unknownConnection(handle: UInt16)
    /// The connection ended while the operation was pending; carries the HCI reason from
    /// Disconnection Complete (e.g. 0x08 connection timeout, 0x13 remote user terminated).
    case disconnected(reason: HCIErrorCode)
    /// The controller driver failed the ACL send (transport closed, for instance).
    case controller(HCIError)
    /// The controller has not been brought up, so its ACL data length is unknown.
    case controllerNotReady
    /// A payload longer than a B-frame's 16-bit length field can carry.
    case payloadTooLarge(size: Int, maximum: Int)
    /// This channel cannot be given a handler (not a fixed channel served here, or the
    /// signaling channel, which L2CAP serves itself).
    case unsupportedChannel(ChannelIdentifier)
    /// The operation belongs to the other role (only a peripheral requests a connection
    /// parameter update).
    case wrongRole(required: ConnectionRole)
    /// The parameters are outside the ranges of Core Vol 3 Part A 4.20.
    case invalidConnectionParameters(ConnectionParameterUpdateRequest)
    /// The central answered the connection parameter update request with "rejected".
    case connectionParameterUpdateRejected
    /// The peer answered a signaling request with Command Reject.
    case commandRejected(CommandReject)
    /// No answer to a signaling request within the signaling timeout.
    case signalingTimeout(milliseconds: Int)
    /// The task waiting for the answer to a signaling request was cancelled; the request
    /// may already be with the peer, whose answer is then ignored.
    case signalingRequestCancelled
    /// All 255 signaling identifiers of the connection are awaiting answers.
    case tooManyPendingRequests
    /// The connection already holds its ``OutgoingLimit`` of the host's PDUs: the
    /// controller has not returned ACL credits for them (the peer is not acknowledging,
    /// or the controller is stuck). Back-pressure: send again once earlier sends finished.
    case outgoingQueueFull(queuedPDUs: Int, queuedBytes: Int)

    public var description: String {
        switch self {
        case let .unknownConnection(handle):
            return "no LE connection with handle 0x\(Hex.string([UInt8(handle >> 8), UInt8(handle & 0xFF)])): it was never established or has ended"
        case let .disconnected(reason):
            return "the connection ended (\(reason)) before the operation finished"
        case let .controller(error):
            return "the controller could not take the data: \(error)"
        case .controllerNotReady:
            return "the controller is not powered on yet: call powerOn() before sending data"
        case let .payloadTooLarge(size, maximum):
            return "payload of \(size) bytes exceeds the L2CAP maximum of \(maximum)"
        case let .unsupportedChannel(channel):
            return "\(channel) cannot take a handler here: only the ATT and SMP fixed channels (and configured ones) can"
        case let .wrongRole(required):
            return "only the \(required) may do this on an LE connection"
        case let .invalidConnectionParameters(request):
            return "connection parameters out of range (interval 6...3200 x 1.25 ms with min <= max, latency <= 499, timeout 10...3200 x 10 ms and longer than (1 + latency) x interval max x 2): \(request)"
        case .connectionParameterUpdateRejected:
            return "the central rejected the connection parameter update"
        case let .commandRejected(reject):
            return "the peer rejected the signaling command: \(reject)"
        case let .signalingTimeout(milliseconds):
            return "the peer did not answer the signaling request within \(milliseconds) ms"
        case .signalingRequestCancelled:
            return "the wait for the peer's answer to the signaling request was cancelled"
        case .tooManyPendingRequests:
            return "255 signaling requests are already awaiting answers on this connection: wait for them"
        case let .outgoingQueueFull(pdus, bytes):
            return "the controller has not returned ACL credits for the \(pdus) PDUs (\(bytes) bytes) already queued on this connection: wait for earlier sends to finish before sending more"
        }
    }
}
