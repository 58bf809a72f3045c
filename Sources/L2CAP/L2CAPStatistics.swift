/// What L2CAP dropped or did not expect; a healthy link shows zeros. Each counter names one
/// drop rule so a trace can be matched to the rule that fired.
public struct L2CAPStatistics: Sendable, Equatable {
    // Reassembly (``ACLReassembler/Drop``).
    public var broadcastFragments = 0
    public var completePacketBoundaryFragments = 0
    public var unexpectedContinuations = 0
    public var interruptedPDUs = 0
    public var oversizedPDUs = 0
    public var unsupportedChannelPDUs = 0
    public var overlongPDUs = 0
    /// ACL data for a handle with no known connection.
    public var unknownConnectionFragments = 0
    /// Whole PDUs for a fixed channel nobody registered a handler for.
    public var unhandledChannelPDUs = 0
    /// SDUs dropped because 64 were already queued behind the early SDUs a channel's first
    /// handler was still being handed.
    public var handOverBacklogDrops = 0

    // Signaling.
    /// Commands that did not decode (short, or a length field that disagrees).
    public var malformedSignalingCommands = 0
    /// Commands with the illegal identifier 0x00, dropped unanswered.
    public var zeroIdentifierCommands = 0
    /// Responses and indications that match nothing we sent.
    public var unexpectedSignalingResponses = 0
    public var commandRejectsSent = 0
    public var connectionParameterUpdatesAccepted = 0
    public var connectionParameterUpdatesRejected = 0
    /// Valid requests answered "rejected" because our LE Connection Update for an earlier
    /// one was still waiting for the controller.
    public var connectionParameterUpdatesRefusedWhileUpdating = 0
    /// LE Connection Update commands the controller refused after we accepted a request.
    public var connectionUpdateCommandFailures = 0

    // Outgoing bound (``OutgoingLimit``), reached only while the controller withholds credits.
    /// Answers the peer provoked (signaling responses and rejects, ATT confirmations and
    /// responses) dropped because the connection already had its limit of answers queued.
    public var answersDroppedForFullQueue = 0
    /// The host's own sends refused with ``L2CAPError/outgoingQueueFull(queuedPDUs:queuedBytes:)``.
    public var sendsRefusedForFullQueue = 0

    public init() {}

    /// Counts `drop`; returns the counter's name (as the log line gives it) and new value.
    mutating func count(_ drop: ACLReassembler.Drop) -> (counter: String, count: Int) {
        func bump(_ counter: WritableKeyPath<L2CAPStatistics, Int>, _ name: String) -> (counter: String, count: Int) {
            self[keyPath: counter] += 1
            return (name, self[keyPath: counter])
        }
        switch drop {
        case .broadcastFlag: return bump(\.broadcastFragments, "broadcastFragments")
        case .completePacketBoundary: return bump(\.completePacketBoundaryFragments, "completePacketBoundaryFragments")
        case .unexpectedContinuation: return bump(\.unexpectedContinuations, "unexpectedContinuations")
        case .interruptedPDU: return bump(\.interruptedPDUs, "interruptedPDUs")
        case .exceedsChannelMaximum: return bump(\.oversizedPDUs, "oversizedPDUs")
        case .unsupportedChannel: return bump(\.unsupportedChannelPDUs, "unsupportedChannelPDUs")
        case .overlongPDU: return bump(\.overlongPDUs, "overlongPDUs")
        }
    }

    /// Every drop of peer data, summed (tests use it to prove "nothing else was dropped").
    public var totalDrops: Int {
        broadcastFragments + completePacketBoundaryFragments + unexpectedContinuations + interruptedPDUs
            + oversizedPDUs + unsupportedChannelPDUs + overlongPDUs + unknownConnectionFragments
            + unhandledChannelPDUs + handOverBacklogDrops + malformedSignalingCommands + zeroIdentifierCommands
            + unexpectedSignalingResponses
    }
}
