import BluetoothCore
import Dispatch
import Logging

/// The ATT client of one bearer (Core 5.4 Vol 3 Part F 3.3).
///
/// - One request at a time: later requests wait in a FIFO and go out when the outstanding
///   one is answered (3.3.2 allows no more than one outstanding request per bearer).
/// - Every transaction has a deadline (30 s by default, 3.3.3). When it passes, the
///   request fails with ``ATTError/transactionTimedOut(request:timeout:)``, every other
///   waiting request fails at once, the bearer is closed so the layer below drops the
///   link, and every later request fails immediately.
/// - A response with the wrong opcode is a protocol violation with the same consequences:
///   once a response is lost or misplaced, requests and responses cannot be matched again.
/// - Notifications and indications are dispatched by handle to subscribers on the
///   bearer's thread; an indication is confirmed after its value has been handed out.
/// - Commands go out at once, without waiting and without a response.
/// - The client never answers a PDU with an Error Response: requests and commands from the
///   peer are for a local server and go to `serverPDUHandler`, if any, or are ignored.
///
/// All state lives behind one `Lock`; nothing is called out (continuations, subscribers,
/// the bearer) while it is held. Callers wait on the stack's one primitive,
/// ``PendingAnswers``; the 30 s deadline is the request's, armed on ``DeadlineTimer`` when
/// it reaches the wire (not when it joins the queue) and cancelled with its response.
public final class ATTClient: Sendable {
    public let bearer: any ATTBearer
    public let transactionTimeout: Duration
    /// Where the client logs (``ATTClient/defaultLogLabel``).
    public let logger: Logger
    let serverPDUHandler: (@Sendable (ATTPDU) -> Void)?
    /// The local server sharing this bearer, if any.
    let server: ATTServer?
    /// Where what reading calls for is sent when the bearer's `send` may wait; nil (sent on
    /// the reader's thread) when it never does.
    let readerSends: DispatchQueue?
    let state = Lock(State())

    typealias Resumption = PendingAnswers<ATTOpcode, ATTPDU, ATTError>.Resumption

    /// A request, queued or on the wire; its caller waits on the expectation `id`, which a
    /// cancelled caller leaves while the request keeps its place on the bearer.
    struct Transaction: Sendable {
        let id: UInt64
        let request: ATTOpcode
        let bytes: [UInt8]
        /// Armed when the request goes out; its passing kills the bearer (3.3.3).
        var deadline: DeadlineTimer.Token?
    }

    struct Subscriber: Sendable {
        let handle: UInt16?
        let deliver: @Sendable (ATTHandleValue) -> Void
        let finish: (@Sendable () -> Void)?
    }

    struct State: Sendable {
        var answers = PendingAnswers<ATTOpcode, ATTPDU, ATTError>()
        /// Subscriber ids.
        var nextID: UInt64 = 1
        var inFlight: Transaction?
        var waiting: [Transaction] = []
        var closedReason: ATTBearerError?
        var subscribers: [UInt64: Subscriber] = [:]
        var mtuExchangeStarted = false
        /// What an Exchange MTU in progress offered, until its result is recorded.
        var mtuOffered: UInt16?
        var statistics = Statistics()
        /// Test hook: told how many requests wait behind the outstanding one.
        var queueObserver: (@Sendable (Int) -> Void)?
    }

    /// What the client dropped or did not expect; a healthy peer shows zeros except the
    /// counts of delivered values and confirmations.
    public struct Statistics: Sendable, Equatable {
        public var malformedPDUs = 0
        /// PDUs longer than the ATT_MTU (invalid, Vol 3 Part F 3.2.8): a response fails its
        /// request as malformed, an indication is confirmed, none is delivered.
        public var oversizedPDUs = 0
        /// Responses that arrived while no request was outstanding.
        public var unsolicitedResponses = 0
        /// Requests, commands and unknown PDUs from the peer with no server to take them.
        public var ignoredPDUs = 0
        public var valuesDelivered = 0
        /// Values a full stream dropped (its oldest) because its reader fell behind: the
        /// streams are bounded since the peer sets the pace.
        public var valuesDroppedByStreams = 0
        public var indicationsConfirmed = 0
    }

    /// Starts a client on `bearer`, which it starts.
    ///
    /// - Parameters:
    ///   - transactionTimeout: how long a request may wait for its response (30 s per the
    ///     specification; shorter in tests).
    ///   - serverPDUHandler: receives, on the bearer's thread, the peer's requests,
    ///     commands, confirmations and unknown PDUs, for a local ATT server sharing the bearer.
    ///   - server: the local ``ATTServer`` on this bearer (made with the same bearer): it
    ///     gets what `serverPDUHandler` would, plus the requests that did not decode (to
    ///     answer them with Invalid PDU), and it ends with the client: a server that closes
    ///     the bearer (a protocol violation, an indication timeout) ends the client, and the
    ///     bearer's end reaches both. Give one of the two.
    public init(
        bearer: any ATTBearer,
        transactionTimeout: Duration = ATTConstants.transactionTimeout,
        serverPDUHandler: (@Sendable (ATTPDU) -> Void)? = nil,
        server: ATTServer? = nil,
        logger: Logger = Logger(label: ATTClient.defaultLogLabel)
    ) {
        self.bearer = bearer
        readerSends = bearer.sendNeverWaits ? nil : DispatchQueue(label: "bareble.att.reader-sends")
        self.transactionTimeout = transactionTimeout
        self.logger = logger
        if let server {
            self.serverPDUHandler = { @Sendable pdu in server.receive(pdu) }
        } else {
            self.serverPDUHandler = serverPDUHandler
        }
        self.server = server
        server?.attach(closeLink: { [weak self] reason in self?.tearDown(reason, closeBearer: true) })
        bearer.start(
            receive: { [weak self] pdu in self?.receive(pdu) },
            oversized: { [weak self] opcode, length in self?.receivedOversized(opcode, length: length) },
            closed: { [weak self] reason in self?.bearerClosed(reason) }
        )
    }

    /// The ATT layer's logger label.
    public static let defaultLogLabel = "bareble.att"

    /// The bearer's current ATT_MTU.
    public var mtu: UInt16 { bearer.mtu }
    public var statistics: Statistics { state.withLock { $0.statistics } }
    /// Why the bearer is unusable, or nil while it works.
    public var closedReason: ATTBearerError? { state.withLock { $0.closedReason } }
    /// Requests sent or waiting to be sent.
    public var pendingRequestCount: Int { state.withLock { ($0.inFlight == nil ? 0 : 1) + $0.waiting.count } }

    /// Closes the bearer; pending requests fail with ``ATTBearerError/closedByHost``.
    public func close() {
        tearDown(.closedByHost, closeBearer: true)
    }

    /// Test hook: `observer` learns, after each request joins the queue, how many wait
    /// behind the outstanding one, so tests can order events without sleeping.
    func observeQueue(_ observer: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.queueObserver = observer }
    }

    // MARK: Transactions

    /// Sends any request PDU and returns the peer's response to it (never an Error
    /// Response: that is thrown as ``ATTError/errorResponse(request:handle:code:)``).
    public func send(request: ATTPDU) async throws(ATTError) -> ATTPDU {
        let opcode = request.opcode
        guard opcode.responseOpcode != nil else {
            throw .invalidRequest("\(opcode) is not a request; send commands with sendCommand(_:)")
        }
        let bytes = request.encode()
        let deadline = ATTProcedureDeadline.current
        let mtu = bearer.mtu
        guard bytes.count <= Int(mtu) else { throw .pduExceedsMTU(opcode, length: bytes.count, mtu: mtu) }
        let registered: Result<(id: UInt64, next: Transaction?, observer: (@Sendable (Int) -> Void)?, queued: Int), ATTError> =
            state.withLock { state in
                if let reason = state.closedReason { return .failure(.bearerClosed(reason)) }
                // A caller cancelled, or out of time, before asking sends nothing.
                if Task.isCancelled { return .failure(.cancelled(request: opcode)) }
                if let deadline, ContinuousClock.now >= deadline { return .failure(.procedureDeadlinePassed(request: opcode)) }
                let id = state.answers.expect(opcode)
                state.waiting.append(Transaction(id: id, request: opcode, bytes: bytes))
                return .success((id, startNextTransaction(&state), state.queueObserver, state.waiting.count))
            }
        let (id, next, observer, queued) = try registered.get()
        if let next { transmit(next) }
        observer?(queued)
        // The wait's deadline is the procedure's, if any: the request's own starts when it
        // is sent, and its passing ends this wait by tearing the bearer down.
        switch await wait(for: id, until: deadline) {
        case let .value(response): return response
        case let .failed(error): throw error
        case .expired:
            // The timer withdrew it (`deadlinePassed`); a deadline already past when the
            // wait began left it queued, so it is withdrawn here.
            state.withLock { $0.waiting.removeAll { $0.id == id } }
            throw .procedureDeadlinePassed(request: opcode)
        case .cancelled: throw .cancelled(request: opcode)
        }
    }

    /// Sends a request and returns its response's parameters.
    func transaction<Response: ATTPDUParameters>(
        _ request: ATTPDU,
        expecting _: Response.Type
    ) async throws(ATTError) -> Response {
        let response = try await send(request: request)
        // `receive` completes a transaction only with its own response opcode, so this
        // cannot fail; the check keeps it a typed error rather than a trap if that changes.
        guard let parameters = response.parameters(as: Response.self) else {
            throw .unexpectedResponse(request: request.opcode, received: response.opcode)
        }
        return parameters
    }

    /// Moves the next waiting request to the wire when none is outstanding; returns it so
    /// the caller can send it once the lock is released.
    func startNextTransaction(_ state: inout State) -> Transaction? {
        guard state.inFlight == nil, state.closedReason == nil, !state.waiting.isEmpty else { return nil }
        var transaction = state.waiting.removeFirst()
        let id = transaction.id
        transaction.deadline = DeadlineTimer.shared.schedule(after: transactionTimeout) { [weak self] in
            self?.transactionExpired(id: id)
        }
        state.inFlight = transaction
        return transaction
    }

    func transmit(_ transaction: Transaction) {
        do {
            try bearer.send(transaction.bytes)
        } catch {
            tearDown(error, closeBearer: false)
        }
    }

    private func transactionExpired(id: UInt64) {
        let request: ATTOpcode? = state.withLock { state in
            guard state.closedReason == nil, let inFlight = state.inFlight, inFlight.id == id else { return nil }
            return inFlight.request
        }
        guard let request else { return }
        logger.warning("transaction timed out; bearer closed", metadata: ["request": "\(request)", "timeout": "\(transactionTimeout)"])
        tearDown(
            .transactionTimedOut(request: request),
            closeBearer: true,
            inFlightError: .transactionTimedOut(request: request, timeout: transactionTimeout),
            onlyIfInFlight: id
        )
    }

    // MARK: Tear-down

    private func bearerClosed(_ reason: ATTBearerError) {
        tearDown(reason, closeBearer: false)
    }

    /// Marks the bearer dead for `reason` (the first reason wins), fails the outstanding
    /// request with `inFlightError` (default: bearer closed) and every waiting one with
    /// ``ATTError/bearerClosed(_:)``, ends subscriber streams, and closes the bearer if asked.
    /// With `onlyIfInFlight`, does nothing unless that transaction is still the outstanding
    /// one: its response may have won the race against its timer.
    func tearDown(
        _ reason: ATTBearerError, closeBearer: Bool, inFlightError: ATTError? = nil, onlyIfInFlight id: UInt64? = nil
    ) {
        let casualties: (resumptions: [Resumption], finishes: [@Sendable () -> Void])? =
            state.withLock { state in
                guard state.closedReason == nil else { return nil }
                if let id, state.inFlight?.id != id { return nil }
                state.closedReason = reason
                var resumptions: [Resumption] = []
                if let inFlight = state.inFlight {
                    if let deadline = inFlight.deadline { DeadlineTimer.shared.cancel(deadline) }
                    if let resumption = state.answers.fulfill(id: inFlight.id, with: .failed(inFlightError ?? .bearerClosed(reason))) {
                        resumptions.append(resumption)
                    }
                }
                state.inFlight = nil
                state.waiting = []
                resumptions += state.answers.fulfillAll(with: .failed(.bearerClosed(reason)))
                let finishes = state.subscribers.values.compactMap(\.finish)
                state.subscribers = [:]
                return (resumptions, finishes)
            }
        guard let casualties else { return }
        server?.bearerEnded(reason)
        if closeBearer { bearer.close(reason: reason) }
        for resumption in casualties.resumptions { resumption.resume() }
        for finish in casualties.finishes { finish() }
    }
}

extension ATTClient: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<ATTOpcode, ATTPDU, ATTError>) -> Result) -> Result {
        state.withLock { body(&$0.answers) }
    }

    /// A caller gave up: a request still queued is withdrawn. One on the wire must get its
    /// response (or time out) before the next may go (3.3.2), so it keeps the bearer and
    /// only its caller is released.
    package func waitCancelled(_ id: UInt64) {
        withdraw(id, .cancelled)
    }

    /// The procedure's deadline passed: the same, under the same lock, so a response
    /// arriving meanwhile cannot send the request after its caller was told it was not.
    package func deadlinePassed(_ id: UInt64) {
        withdraw(id, .expired)
    }

    private func withdraw(_ id: UInt64, _ outcome: WaitOutcome<ATTPDU, ATTError>) {
        let resumption: Resumption? = state.withLock { state in
            state.waiting.removeAll { $0.id == id }
            return state.answers.fulfill(id: id, with: outcome)
        }
        resumption?.resume()
    }
}

extension ATTPDU {
    /// The parameters when this PDU is of type `P`.
    public func parameters<P: ATTPDUParameters>(as _: P.Type) -> P? {
        switch body {
        case .declared(let parameters): parameters as? P
        case .raw: nil
        }
    }
}
