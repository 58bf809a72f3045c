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

    mutating func count(_ drop: ACLReassembler.Drop) {
        switch drop {
        case .broadcastFlag: broadcastFragments += 1
        case .completePacketBoundary: completePacketBoundaryFragments += 1
        case .unexpectedContinuation: unexpectedContinuations += 1
        case .interruptedPDU: interruptedPDUs += 1
        case .exceedsChannelMaximum: oversizedPDUs += 1
        case .unsupportedChannel: unsupportedChannelPDUs += 1
        case .overlongPDU: overlongPDUs += 1
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
