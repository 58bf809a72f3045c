import HCI

/// Everything L2CAP holds for one connection; lives inside the manager's lock.
struct ConnectionState: Sendable {
    var info: L2CAPConnection
    /// Unique per connection, so a late answer or timer for a previous connection that had
    /// the same (reused) handle finds nothing.
    let serial: UInt64
    var reassembler: ACLReassembler
    /// Each handler in a struct: a closure kept as a dictionary's value is stored wrapped
    /// in a thunk and comes back out wrapped in another, an allocation per PDU received.
    var handlers: [ChannelIdentifier: ChannelHandlerEntry] = [:]
    /// SDUs that came for a served channel before its first handler was set (a peer's
    /// Pairing Request racing the code that sets up SMP for a new connection); handed to
    /// that handler, in order, when it is set. A few at most: the rest are dropped.
    var early: [ChannelIdentifier: [[UInt8]]] = [:]
    /// Channels that have had a handler; later gaps drop data as before.
    var registered: Set<ChannelIdentifier> = []
    /// Channels whose early SDUs are being handed over: new ones queue behind them.
    var draining: Set<ChannelIdentifier> = []
    static let maximumEarlySDUs = 4
    /// SDUs that may queue behind early ones while a slow first handler takes them: the
    /// peer decides how many come meanwhile. Past this they are dropped and counted.
    static let maximumHandOverBacklog = 64
    var outgoing = OutgoingQueue()
    /// Our signaling requests awaiting answers: identifier to the expectation in the
    /// manager's ``ChannelManager/State/signalingAnswers``.
    var pendingRequests: [UInt8: UInt64] = [:]
    /// We accepted a peer's connection parameter update and the controller has not yet
    /// answered our LE Connection Update: further requests are rejected meanwhile.
    var updatingConnection = false
    private var lastIdentifier: UInt8 = 0

    init(info: L2CAPConnection, serial: UInt64, maximumPayload: [ChannelIdentifier: Int]) {
        self.info = info
        self.serial = serial
        self.reassembler = ACLReassembler(maximumPayload: maximumPayload)
    }

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

/// A channel's handler as a dictionary's value (see ``ConnectionState/handlers``).
struct ChannelHandlerEntry: Sendable {
    let deliver: ChannelManager.ChannelHandler
}
