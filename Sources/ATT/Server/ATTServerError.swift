/// Why a value the server sends on its own (a notification or an indication) did not go out.
public enum ATTServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bearer cannot carry PDUs any more.
    case bearerClosed(ATTBearerError)
    /// Back-pressure: the layer below holds as many of this host's PDUs as it allows (the
    /// controller has not returned credits for them). Nothing was queued; send again once
    /// earlier PDUs have left (the bearer stays up).
    case outgoingQueueFull
    /// As many indications as the server queues per bearer are already waiting behind the
    /// one outstanding.
    case indicationQueueFull(limit: Int)
    /// The client did not confirm the indication within the transaction timeout; the bearer
    /// is dead and was closed (Core 5.4 Vol 3 Part F 3.3.3).
    case indicationTimedOut(timeout: Duration)
    /// The client has not enabled Multiple Handle Value Notifications (GATT's Client
    /// Supported Features), so they may not be sent to it.
    case multipleNotificationsNotEnabled
    /// Nothing to send: no value was given.
    case nothingToSend
    /// The calling task was cancelled. An indication already sent stays outstanding until
    /// its confirmation or its timeout.
    case cancelled

    public var description: String {
        switch self {
        case .bearerClosed(let reason): "\(reason)"
        case .outgoingQueueFull: "the link's outgoing queue is full: send again once earlier PDUs have left"
        case .indicationQueueFull(let limit): "\(limit) indications already wait for the outstanding one to be confirmed"
        case .indicationTimedOut(let timeout):
            "the client did not confirm an indication within \(timeout); the ATT bearer is dead: the peer must reconnect"
        case .multipleNotificationsNotEnabled:
            "the client has not enabled Multiple Handle Value Notifications"
        case .nothingToSend: "no value was given"
        case .cancelled: "the indication was cancelled"
        }
    }
}
