import HCI

/// One queued outgoing B-frame, already fragmented. It stays at the head of its
/// connection's queue until its last fragment is in the controller, so a disconnection
/// fails it even mid-PDU.
struct OutgoingPDU: Sendable {
    typealias Completion = @Sendable (Result<Void, L2CAPError>) -> Void

    let id: UInt64
    let fragments: [ACLDataPacket]
    var nextFragment = 0
    var completion: Completion?

    var hasUnsentFragments: Bool { nextFragment < fragments.count }
}

/// A signaling request of ours awaiting the peer's answer.
struct PendingSignalingRequest: Sendable {
    let continuation: CheckedContinuation<Result<Void, L2CAPError>, Never>
    let timer: Task<Void, Never>?
}

/// Everything L2CAP holds for one connection; lives inside the manager's lock.
struct ConnectionState: Sendable {
    var info: L2CAPConnection
    /// Unique per connection, so a late answer or timer for a previous connection that had
    /// the same (reused) handle finds nothing.
    let serial: UInt64
    var reassembler: ACLReassembler
    var handlers: [ChannelIdentifier: ChannelManager.ChannelHandler] = [:]
    var outgoing: [OutgoingPDU] = []
    var pendingRequests: [UInt8: PendingSignalingRequest] = [:]
    private var lastIdentifier: UInt8 = 0

    init(info: L2CAPConnection, serial: UInt64, maximumPayload: [ChannelIdentifier: Int]) {
        self.info = info
        self.serial = serial
        self.reassembler = ACLReassembler(maximumPayload: maximumPayload)
    }

    var hasUnsentFragments: Bool { outgoing.contains { $0.hasUnsentFragments } }

    /// The next signaling identifier: never 0x00 (illegal), never one still awaiting an
    /// answer. Nil only if all 255 are pending.
    mutating func allocateIdentifier() -> UInt8? {
        for _ in 0..<255 {
            lastIdentifier = lastIdentifier == 0xFF ? 1 : lastIdentifier + 1
            if pendingRequests[lastIdentifier] == nil { return lastIdentifier }
        }
        return nil
    }
}
