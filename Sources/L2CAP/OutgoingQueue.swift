import HCI

/// Who a queued PDU is for, which decides what happens when a connection's queue is full.
public enum OutgoingOrigin: Sendable, Hashable {
    /// The host's own PDU (a request, a command, a notification): refused with
    /// ``L2CAPError/outgoingQueueFull(queuedPDUs:queuedBytes:)`` when the connection is at
    /// its bound, so the caller learns to wait.
    case host
    /// An answer the peer provoked (a signaling response or Command Reject, an ATT
    /// confirmation or response): dropped and counted in
    /// ``L2CAPStatistics/answersDroppedForFullQueue`` when the connection's answers are at
    /// their bound, because the peer, not the host, decides how many there are.
    case answer
}

/// How much one connection may have queued for the controller. Reached only when the
/// controller stops returning ACL credits (the peer stopped acknowledging our link-layer
/// packets, or the controller is wedged) while PDUs keep coming.
public struct OutgoingLimit: Sendable, Equatable {
    /// The host's own PDUs. 256 is eight times what a GATT server's burst of notifications
    /// or a long write's prepared writes keep queued at once.
    public var hostPDUs: Int
    /// The host's own payload bytes: 256 full 251-byte packets. A PDU is always admitted
    /// into a queue holding none of the host's, whatever its size.
    public var hostBytes: Int
    /// Answers to the peer. A peer that waits for its answers (as ATT and L2CAP signaling
    /// require) has one or two outstanding; the rest of a flood is dropped.
    public var answers: Int

    public init(hostPDUs: Int = 256, hostBytes: Int = 65_536, answers: Int = 32) {
        self.hostPDUs = hostPDUs
        self.hostBytes = hostBytes
        self.answers = answers
    }
}

/// What became of a frame offered to a connection's queue.
enum EnqueueOutcome: Sendable, Equatable {
    case queued
    /// An answer met its bound; it was counted.
    case answerDropped
    case refused(L2CAPError)
}

/// One queued outgoing B-frame, encoded; its ACL fragments are cut as they are handed to
/// the driver. It stays at the head of its connection's queue until its last fragment is
/// in the controller, so a disconnection fails it even mid-PDU.
struct OutgoingPDU: Sendable {
    typealias Completion = @Sendable (Result<Void, L2CAPError>) -> Void

    let id: UInt64
    let frame: [UInt8]
    let connectionHandle: UInt16
    /// The controller's ACL data length when the PDU was queued: each fragment's most.
    let fragmentLength: Int
    let origin: OutgoingOrigin
    let payloadBytes: Int
    /// Octets of `frame` handed to the driver so far.
    var handedBytes = 0
    var completion: Completion?

    var hasUnsentFragments: Bool { handedBytes < frame.count }

    /// The next fragment, counted as handed.
    mutating func takeNextFragment() -> ACLDataPacket {
        let packet = ACLFragmentation.fragment(of: frame, at: handedBytes, connectionHandle: connectionHandle, maximumLength: fragmentLength)
        handedBytes += packet.data.count
        return packet
    }
}

/// One connection's PDUs for the controller, in order, with the counts its bound needs
/// kept as PDUs come and go (a flood makes counting by scanning too slow).
///
/// The queue is `slots[head...]`. Taking the head empties its slot at once (what it
/// holds is released) and moves `head` on; the emptied prefix is dropped once it is at
/// least half the array. So taking from the front costs O(1) amortised where an array's
/// `removeFirst` moves every PDU behind it: a notification burst keeps up to 256 queued
/// and takes one per credit.
///
/// Fragments are handed to the driver in queue order, so `unsent` marks the first PDU with
/// fragments not yet handed: every PDU before it is wholly handed, every one after it
/// untouched, and finding the next fragment costs O(1), not a scan past the PDUs waiting
/// for their credits.
struct OutgoingQueue: Sendable {
    private var slots: [OutgoingPDU?] = []
    private var head = 0
    /// The slot of the first PDU with fragments not yet handed; `slots.count` when none.
    private var unsent = 0
    private(set) var hostPDUs = 0
    private(set) var hostBytes = 0
    private(set) var answers = 0

    var count: Int { slots.count - head }
    /// The array's length, taken slots included: less than twice ``count``.
    var storedSlots: Int { slots.count }
    var first: OutgoingPDU? { head < slots.count ? slots[head] : nil }
    var hasUnsentFragments: Bool { unsent < slots.count }

    /// Whether a PDU of `origin` and `payloadBytes` fits under `limit`.
    func admits(_ origin: OutgoingOrigin, payloadBytes: Int, under limit: OutgoingLimit) -> Bool {
        switch origin {
        case .answer:
            return answers < limit.answers
        case .host:
            return hostPDUs == 0 || (hostPDUs < limit.hostPDUs && hostBytes + payloadBytes <= limit.hostBytes)
        }
    }

    mutating func append(_ pdu: OutgoingPDU) {
        slots.append(pdu)
        skipHandedPDUs()
        adjust(for: pdu, by: 1)
    }

    /// The head PDU, taken off the queue; nil when the queue is empty.
    mutating func removeFirst() -> OutgoingPDU? {
        guard head < slots.count, let pdu = slots[head] else { return nil }
        slots[head] = nil
        head += 1
        unsent = max(unsent, head)
        if head * 2 >= slots.count {
            slots.removeFirst(head)
            unsent -= head
            head = 0
        }
        adjust(for: pdu, by: -1)
        return pdu
    }

    /// The head PDU, taken off the queue when it is `id` and all its fragments have been
    /// handed; else nil.
    mutating func removeFirst(ifHanded id: UInt64) -> OutgoingPDU? {
        guard head < unsent, slots[head]?.id == id else { return nil }
        return removeFirst()
    }

    /// What must learn that its PDU will never be sent if the queue goes now.
    var completions: [OutgoingPDU.Completion] { slots[head...].compactMap { $0?.completion } }

    /// Empties the queue, returning ``completions``.
    mutating func removeAll() -> [OutgoingPDU.Completion] {
        defer { self = OutgoingQueue() }
        return completions
    }

    /// The next fragment to hand the driver, marked as handed.
    mutating func takeNextFragment() -> (pduID: UInt64, packet: ACLDataPacket)? {
        guard unsent < slots.count, let packet = slots[unsent]?.takeNextFragment(), let id = slots[unsent]?.id else { return nil }
        skipHandedPDUs()
        return (id, packet)
    }

    /// Moves `unsent` past PDUs with nothing left to hand.
    private mutating func skipHandedPDUs() {
        while unsent < slots.count, slots[unsent]?.hasUnsentFragments != true { unsent += 1 }
    }

    /// Adds `completion` to the last PDU's, which stands for all before it (one queue, sent
    /// in order). False when the queue is empty.
    mutating func chainToLast(_ completion: @escaping OutgoingPDU.Completion) -> Bool {
        guard head < slots.count else { return false }
        let last = slots.count - 1
        let previous = slots[last]?.completion
        slots[last]?.completion = { result in
            previous?(result)
            completion(result)
        }
        return true
    }

    private mutating func adjust(for pdu: OutgoingPDU, by sign: Int) {
        switch pdu.origin {
        case .answer:
            answers += sign
        case .host:
            hostPDUs += sign
            hostBytes += sign * pdu.payloadBytes
        }
    }
}
