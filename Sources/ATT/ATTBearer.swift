import BluetoothCore

/// A channel that carries ATT PDUs to one peer: the LE fixed channel 0x0004 over our own
/// L2CAP, the kernel's L2CAP ATT socket, or (later) an enhanced bearer. ATT knows nothing
/// else about the layers below.
///
/// Threading: `receive` is called synchronously, one PDU at a time and in arrival order,
/// on whatever thread the bearer reads on; `closed` is called at most once, after the last
/// `receive`. A bearer may call `receive` from inside `send` (a loopback), so users must
/// not hold locks across `send`.
public protocol ATTBearer: Sendable {
    /// Starts delivery. Call once. `oversized` is told, in order with `receive`, of a PDU
    /// the layer below dropped unread because it was longer than the ATT_MTU (its opcode
    /// when known, and its announced length); a bearer that cannot see such drops never
    /// calls it.
    func start(
        receive: @escaping @Sendable (_ pdu: [UInt8]) -> Void,
        oversized: @escaping @Sendable (_ opcode: ATTOpcode?, _ length: Int) -> Void,
        closed: @escaping @Sendable (ATTBearerError) -> Void
    )

    /// Sends one PDU (opcode and parameters). Throws when the bearer is gone.
    func send(_ pdu: [UInt8]) throws(ATTBearerError)

    /// Sends one PDU the host chose to send (a server's notification or indication),
    /// unless the layer below already holds as many of the host's PDUs as it allows: then
    /// nothing is queued, false comes back and the bearer stays up, so the caller gets
    /// back-pressure instead of a growing queue. Throws when the bearer is gone. By default
    /// the same as ``send(_:)``, for bearers with no bound of their own.
    func sendUnlessFull(_ pdu: [UInt8]) throws(ATTBearerError) -> Bool

    /// Returns once every PDU sent so far has left for the controller or failed (a
    /// refused ``sendUnlessFull(_:)`` may then be tried again). By default at once.
    func waitUntilSent() async

    /// The bearer's ATT_MTU now: 23 on a new LE bearer, then what an exchange agreed or
    /// what the layer below reports.
    var mtu: UInt16 { get }

    /// True when the layer below decides the MTU (an enhanced bearer's L2CAP channel, or a
    /// kernel socket that reports what it negotiated): then no Exchange MTU Request is
    /// sent and ``mtu`` is taken as it is.
    var mtuIsNegotiatedBelow: Bool { get }

    /// Records the MTU an Exchange MTU agreed, so later PDUs may be that long.
    func mtuExchanged(_ mtu: UInt16)

    /// The largest ATT_MTU the layer below can carry (a kernel socket's SDU limit), or nil
    /// when it sets no limit: Exchange MTU never offers more.
    var maximumMTU: UInt16? { get }

    /// True when ``send(_:)`` never waits for the peer or the kernel (it queues, or writes
    /// only what the layer below has room for): the server may then answer on the thread
    /// that delivered the request. False by default: a kernel socket's write waits while
    /// its send buffer is full, which must not stop the bearer's reading.
    var sendNeverWaits: Bool { get }

    /// Closes the bearer for `reason`. On the LE fixed channel the layer below drops the
    /// link: after a transaction timeout no PDU may be sent on it again (Core 5.4 Vol 3
    /// Part F 3.3.3), and a new bearer needs a new connection.
    func close(reason: ATTBearerError)
}

extension ATTBearer {
    public var maximumMTU: UInt16? { nil }
    public var sendNeverWaits: Bool { false }
    public func waitUntilSent() async {}

    public func sendUnlessFull(_ pdu: [UInt8]) throws(ATTBearerError) -> Bool {
        try send(pdu)
        return true
    }
}

/// Why an ATT bearer can no longer carry PDUs.
public enum ATTBearerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The link went down; `reason` is the HCI error code of Disconnection Complete
    /// (Core 5.4 Vol 1 Part F), e.g. 0x13 when the peer ended the connection, 0x08 on a
    /// supervision timeout.
    case disconnected(reason: UInt8)
    /// The layer below failed; the text says how.
    case failed(String)
    /// A transaction timed out: the bearer is dead (Core 5.4 Vol 3 Part F 3.3.3).
    case transactionTimedOut(request: ATTOpcode)
    /// The peer answered `request` with a PDU that is not its response, so requests and
    /// responses can no longer be matched; or, seen by a server, the client sent the
    /// request `received` while its `request` was unanswered (3.3.2).
    case protocolViolation(request: ATTOpcode, received: ATTOpcode)
    /// This host closed the bearer.
    case closedByHost

    public var description: String {
        switch self {
        case .disconnected(let reason):
            "the link was disconnected (HCI reason 0x\(Hex.string([reason])))"
        case .failed(let text):
            "the ATT bearer failed: \(text)"
        case .transactionTimedOut(let request):
            "the peer did not answer \(request.name) within the ATT transaction timeout, so the bearer is dead: reconnect to talk to it again"
        case let .protocolViolation(request, received) where received.kind == .request:
            "the peer sent \(received.name) while its \(request.name) was still unanswered (ATT allows one request at a time), so the bearer was closed: a client that pipelines requests must wait for each response"
        case let .protocolViolation(request, received):
            "the peer answered \(request.name) with \(received.name), which breaks the protocol, so the bearer was closed: reconnect to talk to it again"
        case .closedByHost:
            "the ATT bearer was closed by this host"
        }
    }
}
