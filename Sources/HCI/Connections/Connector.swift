import BluetoothCore

/// Creates and tracks the LE connections of one controller (Core Vol 4 Part E 7.8.12,
/// 7.8.13, 7.8.66; Vol 6 Part B 4.5).
///
/// - ``connect(to:parameters:options:timeout:)`` uses LE Extended Create Connection when the
///   controller has it, LE Create Connection otherwise, and accepts LE Connection Complete
///   and LE Enhanced Connection Complete v1/v2 alike (the event mask decides which comes).
/// - A controller initiates one connection at a time. Concurrent calls *queue* in FIFO
///   order instead of failing: connecting to several devices is a normal thing to ask for.
///   Time spent in the queue counts against the caller's deadline.
/// - When the deadline passes or the task is cancelled, LE Create Connection Cancel is sent
///   and the connector waits for the attempt's LE Connection Complete (Unknown Connection
///   Identifier) before throwing, so the controller is never left initiating. If the
///   connection completed in that race, it is disconnected: the caller has given up, and a
///   connection returned after its deadline would be one it no longer expects.
/// - Connections made to us as a peripheral (after our connectable advertising) appear in
///   ``incomingConnections()``.
/// - Disconnection Complete, a hardware error or a closed transport end a connection, and
///   every operation pending on it fails at once with the reason.
public final class Connector: Sendable {
    public let controller: HCIController
    /// How long to wait for the attempt's completion after LE Create Connection Cancel.
    let cancelTimeout: Duration

    package enum Wait: Hashable, Sendable {
        /// A turn at the controller's single initiator.
        case initiator
        /// The current attempt's LE (Enhanced) Connection Complete.
        case completion
    }

    package enum Event: Sendable {
        case granted
        /// The attempt ended with a connection.
        case connected(Connection)
        /// The attempt ended with this status.
        case refused(HCIErrorCode)
    }

    struct Attempt: Sendable {
        let peer: DeviceAddress
        /// Kept so a completion that arrives between two waits of one attempt is not lost.
        var outcome: WaitOutcome<Event, ConnectionError>?
    }

    struct State: Sendable {
        var connections: [UInt16: Connection] = [:]
        var initiatorBusy = false
        var attempt: Attempt?
        /// The controller did not confirm a cancel: a late success is disconnected.
        var abandonedAttempt = false
        var expectations = PendingAnswers<Wait, Event, ConnectionError>()
        var incoming: [UInt64: AsyncStream<Connection>.Continuation] = [:]
        var acceptor: (id: UInt64, accept: @Sendable (Connection) -> Void)?
        var droppedIncomingConnections = 0
        var nextID: UInt64 = 1
        var subscription: Subscription?
        var statusTask: Task<Void, Never>?
    }

    let state = Lock(State())

    /// `package`: outside the package a Connector comes with L2CAP, from `ControllerHost`
    /// (module L2CAP), which subscribes L2CAP first: the controller calls subscribers in
    /// the order they subscribed, and the acceptor builds a link on L2CAP, which must
    /// already know the connection. Inside, tests of HCI alone use it.
    package convenience init(controller: HCIController) {
        self.init(controller: controller, cancelTimeout: .seconds(3))
    }

    init(controller: HCIController, cancelTimeout: Duration) {
        self.controller = controller
        self.cancelTimeout = cancelTimeout
        let subscription = controller.subscribe { [weak self] event in self?.handle(event) }
        let updates = controller.statusUpdates()
        let task = Task { [weak self] in
            for await status in updates {
                guard case let .closed(error) = status else { continue }
                self?.controllerLost(.controller(.transportClosed(error)), reason: nil)
            }
        }
        state.withLock {
            $0.subscription = subscription
            $0.statusTask = task
        }
    }

    deinit {
        state.withLock { state in
            state.statusTask?.cancel()
            for continuation in state.incoming.values { continuation.finish() }
        }
    }

    /// The live connections, in handle order.
    public var connections: [Connection] {
        state.withLock { Array($0.connections.values) }.sorted { $0.handle < $1.handle }
    }

    public func connection(handle: UInt16) -> Connection? {
        state.withLock { $0.connections[handle] }
    }

    /// How many connections an ``incomingConnections()`` stream holds for a reader that
    /// falls behind (peers decide how many connect).
    public static let incomingConnectionBufferLimit = 64

    /// Incoming connections a stream had no room for (counted once per stream).
    public var droppedIncomingConnections: Int { state.withLock { $0.droppedIncomingConnections } }

    /// Connections in which we are the peripheral, as they come up, for as long as the
    /// stream is iterated. Each stream gets every one. A stream holding
    /// ``incomingConnectionBufferLimit`` unread connections takes no more: the newcomer is
    /// counted in ``droppedIncomingConnections`` and, when no stream took it, disconnected
    /// with 0x14 (low resources), since nobody would ever serve it.
    public func incomingConnections() -> AsyncStream<Connection> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Connection.self, bufferingPolicy: .bufferingOldest(Self.incomingConnectionBufferLimit))
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.incoming[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.incoming.removeValue(forKey: id) }
        }
        return stream
    }

    /// Takes each incoming connection synchronously, on the transport's reader thread,
    /// before the ``incomingConnections()`` streams and before any later event of the link
    /// is handled: a link's stack (SMP with its LTK answers, the ATT bearer) is then in
    /// place before a central that encrypts or pairs at once is heard. One acceptor per
    /// connector; returns nil when another is set, else the token that removes it. Keep it
    /// short: no waiting, no I/O.
    package func setAcceptor(_ acceptor: @escaping @Sendable (Connection) -> Void) -> UInt64? {
        state.withLock { state in
            guard state.acceptor == nil else { return nil }
            defer { state.nextID += 1 }
            state.acceptor = (state.nextID, acceptor)
            return state.nextID
        }
    }

    /// Removes the acceptor `token` set; another's stays (a refused second owner must not
    /// take the first one's away).
    package func removeAcceptor(_ token: UInt64) {
        state.withLock { state in
            if state.acceptor?.id == token { state.acceptor = nil }
        }
    }

    // MARK: Connecting

    /// Connects to `peer` as central and returns the connection once it is up and the
    /// requests in `options` are answered.
    ///
    /// Throws ``ConnectionError/timedOut(_:after:)`` when the peer does not answer within
    /// `timeout` (counted from this call, queueing included) and
    /// ``ConnectionError/cancelled(_:)`` when the task is cancelled; in both cases only
    /// after the controller confirmed it stopped initiating.
    public func connect(
        to peer: DeviceAddress,
        parameters: ConnectionParameters = .default,
        options: ConnectionOptions = .none,
        timeout: Duration = .seconds(10)
    ) async throws(ConnectionError) -> Connection {
        let deadline = ContinuousClock.now + timeout
        guard let info = controller.info else { throw .controllerNotReady }
        try parameters.validate()
        let command = try CreateConnectionPlan(peer: peer, parameters: parameters, info: info)
        try checkOptions(options, info: info)

        try await acquireInitiator(for: peer, until: deadline, timeout: timeout)
        defer { releaseInitiator() }

        if case let .random(address) = parameters.ownAddress {
            do {
                try await controller.send(LESetRandomAddress(randomAddress: address))
            } catch .commandCancelled {
                throw .cancelled(peer)
            } catch {
                throw .controller(error)
            }
        }
        let id = state.withLock { state in
            state.attempt = Attempt(peer: peer)
            return state.expectations.expect(.completion)
        }
        do {
            try await command.send(on: controller)
        } catch {
            state.withLock { state in
                state.attempt = nil
                state.expectations.forget(id)
            }
            if case .commandCancelled = error { throw .cancelled(peer) }
            throw .controller(error)
        }

        let connection: Connection
        switch await wait(for: id, until: deadline) {
        case let .value(.connected(made)):
            state.withLock { $0.attempt = nil }
            connection = made
        case let .value(.refused(status)):
            state.withLock { $0.attempt = nil }
            controller.logger.info("connection failed", metadata: ["peer": "\(peer)", "status": "\(status)"])
            throw .failed(peer, status)
        case let .failed(error):
            state.withLock { $0.attempt = nil }
            throw error
        case .expired:
            controller.logger.warning("connection attempt timed out", metadata: ["peer": "\(peer)", "timeout": "\(timeout)"])
            try await cancelAttempt(to: peer, giving: .timedOut(peer, after: timeout))
        case .cancelled, .value(.granted):
            try await cancelAttempt(to: peer, giving: .cancelled(peer))
        }
        if command.mayUseOtherPHYs { await readPHY(of: connection) }
        try await apply(options, to: connection)
        return connection
    }

    /// LE Create Connection Cancel, then the attempt's completion; always throws `error`
    /// unless the controller fails first.
    private func cancelAttempt(to peer: DeviceAddress, giving error: ConnectionError) async throws(ConnectionError) -> Never {
        do {
            // From a cancelled task too: that is when the attempt must stop.
            try await controller.send(LECreateConnectionCancel(), cancellable: false)
        } catch .commandFailed(_, .commandDisallowed) {
            // Nothing is pending any more: the completion is already on its way.
        } catch {
            state.withLock { $0.attempt = nil }
            throw .controller(error)
        }
        let deadline = ContinuousClock.now + cancelTimeout
        let (early, id): (WaitOutcome<Event, ConnectionError>?, UInt64?) = state.withLock { state in
            if let outcome = state.attempt?.outcome { return (outcome, nil) }
            return (nil, state.expectations.expect(.completion))
        }
        var outcome = early
        if outcome == nil, let id { outcome = await wait(for: id, until: deadline, cancellable: false) }
        state.withLock { state in
            state.attempt = nil
            if case .expired? = outcome { state.abandonedAttempt = true }
        }
        switch outcome {
        case let .value(.connected(connection))?:
            // Connected in the race with the cancel: the caller has given up on it.
            try? await connection.disconnect()
            throw error
        case let .failed(failure)?:
            throw failure
        case .expired?:
            throw .cancelNotConfirmed(peer)
        default:
            throw error
        }
    }

    private func checkOptions(_ options: ConnectionOptions, info: ControllerInfo) throws(ConnectionError) {
        if let octets = options.dataLength {
            guard info.supports(LESetDataLength.self), info.leFeatures.contains(.leDataPacketLengthExtension) else {
                throw .unsupported("LE Data Packet Length Extension (asked for a data length)")
            }
            guard (27...251).contains(octets) else { throw .invalidParameters("data length \(octets) octets is outside 27 ... 251") }
        }
        if options.prefer2MPHY {
            guard info.supports(LESetPHY.self), info.leFeatures.contains(.le2MPHY) else {
                throw .unsupported("LE 2M PHY (asked to prefer it)")
            }
        }
    }

    /// The requests of ``ConnectionOptions``. A refusal leaves the connection as it was and
    /// is not an error; a connection that drops meanwhile is.
    private func apply(_ options: ConnectionOptions, to connection: Connection) async throws(ConnectionError) {
        do {
            if let octets = options.dataLength { try await connection.requestDataLength(txOctets: octets) }
            if options.prefer2MPHY { try await connection.requestPHY(tx: .le2M, rx: .le2M) }
        } catch let error {
            if case .disconnected = error { throw error }
        }
    }

    /// Connections over Extended Create Connection may come up on LE 2M or Coded, which the
    /// completion event does not say.
    private func readPHY(of connection: Connection) async {
        guard controller.info?.supports(LEReadPHY.self) == true,
              let answer = try? await controller.send(LEReadPHY(connectionHandle: connection.handle)) else { return }
        connection.phyRead(ConnectionPHY(tx: answer.txPHY, rx: answer.rxPHY))
    }

    // MARK: The initiator queue

    private func acquireInitiator(for peer: DeviceAddress, until deadline: ContinuousClock.Instant, timeout: Duration) async throws(ConnectionError) {
        let id: UInt64? = state.withLock { state in
            if !state.initiatorBusy {
                state.initiatorBusy = true
                return nil
            }
            return state.expectations.expect(.initiator)
        }
        guard let id else {
            if Task.isCancelled {
                releaseInitiator()
                throw .cancelled(peer)
            }
            return
        }
        switch await wait(for: id, until: deadline) {
        case .value: return
        case .expired: throw .timedOut(peer, after: timeout)
        case .cancelled: throw .cancelled(peer)
        case let .failed(error): throw error
        }
    }

    /// Hands the initiator to the next caller in the queue, or frees it.
    private func releaseInitiator() {
        let next = state.withLock { state in
            let (delivered, resumption) = state.expectations.fulfillFirst(.initiator, with: .value(.granted))
            if !delivered { state.initiatorBusy = false }
            return resumption
        }
        next?.resume()
    }
}

extension Connector: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<Wait, Event, ConnectionError>) -> Result) -> Result {
        state.withLock { body(&$0.expectations) }
    }
}
