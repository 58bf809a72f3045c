import BluetoothCore
import HCITransport
import Logging
import Synchronization

/// The controller driver: the one place that owns the state of one controller.
///
/// - Commands go out no faster than the controller's Num_HCI_Command_Packets allows; each
///   Command Complete/Status is matched to the oldest outstanding command with its opcode;
///   every command has a deadline that ends in ``HCIError/commandTimedOut(_:milliseconds:)``.
/// - Events are decoded on the transport's reader thread and handed, synchronously and in
///   order, to every subscriber. Bytes that do not decode are counted and dropped, never
///   allowed to stop the stack.
/// - ACL credits follow LE Read Buffer Size and Number Of Completed Packets.
/// - A Hardware Error event is reported, then the controller is reset and brought up again.
public final class HCIController: Sendable {
    public typealias EventHandler = @Sendable (HCIEvent) -> Void
    public typealias ACLHandler = @Sendable (ACLDataPacket) -> Void
    /// Told once whether a packet that waited for a credit was sent on it.
    public typealias ACLSendCompletion = @Sendable (Result<Void, HCIError>) -> Void

    /// Default deadline for one command. Controllers answer in microseconds to a few
    /// milliseconds; Reset on some UART chips takes a few hundred.
    public static let defaultCommandTimeout: Duration = .seconds(5)

    public let transport: any HCITransport
    /// Where the driver, the scanner and the Connector log (``HCIController/defaultLogLabel``).
    public let logger: Logger
    let state = Lock(State())
    /// ``info``'s ACL packet length, read without the lock on every send (0 before bring-up).
    private let aclPacketLengthStore = Atomic(0)

    /// A command queued or sent; its caller waits in `State.answers` under the same id.
    struct QueuedCommand: Sendable {
        let id: UInt64
        let opcode: HCIOpcode
        let packet: HCIPacket
        let completesWithStatus: Bool
    }

    /// Where ACL data goes, as ``State`` keeps it (see `State.acl`).
    struct ACLReceiver: Sendable {
        var handler: ACLHandler?
    }

    struct State: Sendable {
        var nextID: UInt64 = 1
        var commandCredits = 1
        var waiting: [QueuedCommand] = []
        var inFlight: [QueuedCommand] = []
        /// A thread is sending commands (`pumpCommands`), outside the lock.
        var sendingCommands = false
        /// The callers of the commands above, by the commands' ids.
        var answers = PendingAnswers<HCIOpcode, [UInt8], HCIError>()
        var eventHandlers: [UInt64: EventHandler] = [:] {
            // Rebuilt only when subscribers change, so delivering an event retains an array
            // instead of allocating one: this runs for every advertising report. In
            // subscription order, so a layer created first sees an event first: L2CAP knows
            // a connection before the Connector (created after it) hands it to a caller.
            didSet { eventHandlerList = eventHandlers.sorted { $0.key < $1.key }.map(\.value) }
        }
        var eventHandlerList: [EventHandler] = []
        /// In a struct: a closure read out of the lock on its own comes back wrapped in a
        /// new reabstraction thunk (an allocation per ACL packet); a struct's field is read
        /// as it is.
        var acl = ACLReceiver()
        var aclFlow = ACLFlowControl(total: 0)
        /// Handles whose Disconnection Complete arrived and that no new connection has
        /// reused yet: ACL for them is refused instead of taking a credit that never returns.
        var closedHandles: Set<UInt16> = []
        /// Packets waiting for a credit, in arrival order.
        var aclWaiters: [ACLWaiter] = []
        var statusContinuations: [UInt64: AsyncStream<ControllerStatus>.Continuation] = [:]
        var status: ControllerStatus = .off
        var info: ControllerInfo?
        var closedError: HCIError?
        var statistics = Statistics()
        /// On a controller shared with the kernel: what we switched on and must undo.
        var sharedChanges = SharedControllerChanges()
    }

    /// Counters of what the driver dropped or did not expect; a healthy link shows zeros.
    public struct Statistics: Sendable, Equatable {
        public var malformedEvents = 0
        public var malformedACLPackets = 0
        public var unmatchedCommandCompletes = 0
        public var commandTimeouts = 0
        public var hardwareErrors = 0
        /// Statuses a ``HCIController/statusUpdates()`` stream dropped because its reader
        /// fell more than ``HCIController/statusBufferLimit`` behind (the oldest go).
        public var statusUpdatesDropped = 0
        /// Events an ``HCIController/events(bufferingNewest:)`` stream dropped because its
        /// reader fell behind (the oldest go).
        public var eventStreamDrops = 0
    }

    /// The HCI layer's logger label.
    public static let defaultLogLabel = "bareble.hci"

    public init(transport: any HCITransport, logger: Logger = Logger(label: HCIController.defaultLogLabel)) {
        self.transport = transport
        self.logger = logger
    }

    /// Starts reading from the transport. Call once, before ``powerOn()``.
    public func start() throws(TransportError) {
        try transport.start(
            receive: { [weak self] packet in self?.receive(packet) },
            closed: { [weak self] error in self?.transportClosed(error) }
        )
    }

    /// Closes the transport; pending commands fail with ``HCIError/transportClosed(_:)``.
    /// On a controller shared with the kernel (`hci-raw:N`), first queues the commands
    /// that switch off the scanning and advertising we switched on (the kernel sends them
    /// even after our socket is gone); ``restoreSharedState()`` does it and waits.
    public func close() {
        if transport.sharesControllerWithKernel {
            let undo = state.withLock { state in
                defer { state.sharedChanges = SharedControllerChanges() }
                return state.sharedChanges.undoPackets
            }
            for packet in undo { try? transport.send(packet) }
        }
        transport.close()
        transportClosed(nil)
    }

    public var info: ControllerInfo? { state.withLock { $0.info } }
    /// The largest ACL data packet the controller accepts (``info``'s `aclBuffer`), 0 before
    /// bring-up: what L2CAP fragments to, read on every send without copying ``info``.
    public var aclPacketLength: Int { aclPacketLengthStore.load(ordering: .acquiring) }
    public var statistics: Statistics { state.withLock { $0.statistics } }
    public var currentStatus: ControllerStatus { state.withLock { $0.status } }

    // MARK: Commands

    /// Sends a command and returns its decoded return parameters, or throws when the
    /// controller answers with an error status, answers garbage, or does not answer in time.
    ///
    /// Cancelling the task withdraws a command still queued behind others (it throws
    /// ``HCIError/commandCancelled(_:)`` at once, and nothing reaches the controller). A
    /// command already sent has taken effect, so its caller still gets the controller's
    /// answer (within `timeout`) to act on it. Clean-up that must go out even from a
    /// cancelled task passes `cancellable: false`.
    @discardableResult
    public func send<Command: HCICommand>(
        _ command: Command,
        timeout: Duration = HCIController.defaultCommandTimeout,
        cancellable: Bool = true
    ) async throws(HCIError) -> Command.ReturnParameters {
        let opcode = Command.opcode
        let answer = try await sendPacket(
            HCIPacket(.command, command.encode()),
            opcode: opcode,
            completesWithStatus: Command.completesWithStatus,
            timeout: timeout,
            cancellable: cancellable
        )
        var reader = ByteReader(answer)
        do {
            let status = HCIErrorCode(rawValue: try reader.readUInt8())
            guard status == .success else { throw HCIError.commandFailed(opcode, status) }
            if transport.sharesControllerWithKernel { state.withLock { $0.sharedChanges.note(command) } }
            if Command.completesWithStatus { return try Command.ReturnParameters(decoding: &reader) }
            let parameters = try Command.ReturnParameters(decoding: &reader)
            try reader.expectEnd()
            return parameters
        } catch let error as DecodeError {
            throw .malformedReturnParameters(opcode, error)
        } catch let error as HCIError {
            throw error
        } catch {
            throw .malformedReturnParameters(opcode, .invalidValue(field: "return parameters", value: 0))
        }
    }

    /// Sends an already encoded command packet; returns the Command Complete's return
    /// parameters (status first), or the status alone for commands that complete with
    /// Command Status. For tools that send commands BareBLE has no type for.
    public func sendPacket(
        _ packet: HCIPacket,
        opcode: HCIOpcode,
        completesWithStatus: Bool,
        timeout: Duration = HCIController.defaultCommandTimeout,
        cancellable: Bool = true
    ) async throws(HCIError) -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        let registered: Result<UInt64, HCIError> = state.withLock { state in
            if let error = state.closedError { return .failure(error) }
            let id = state.answers.expect(opcode)
            state.waiting.append(QueuedCommand(id: id, opcode: opcode, packet: packet, completesWithStatus: completesWithStatus))
            return .success(id)
        }
        for resumption in pumpCommands() { resumption.resume() }
        switch await wait(for: try registered.get(), until: deadline, cancellable: cancellable) {
        case let .value(answer): return answer
        case let .failed(error): throw error
        case .expired:
            let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            throw .commandTimedOut(opcode, milliseconds: milliseconds)
        case .cancelled: throw .commandCancelled(opcode)
        }
    }

    typealias Resumption = PendingAnswers<HCIOpcode, [UInt8], HCIError>.Resumption

    /// Sends queued commands while the controller has room, in queue order, with no lock
    /// held while the transport takes them (a socket's write may wait, and the reader
    /// needs the lock for every event meanwhile). They are posted: a byte stream that takes
    /// nothing leaves them to its reader, so no caller's thread waits for it. One thread
    /// sends at a time; one that finds another sending leaves its commands to it, and that
    /// one takes what was queued meanwhile before it stops. Returns the callers of commands
    /// the transport refused, to be resumed by the caller.
    private func pumpCommands() -> [Resumption] {
        var failed: [Resumption] = []
        var batch: [QueuedCommand] = state.withLock { state in
            guard !state.sendingCommands else { return [] }
            return takeSendableCommands(&state)
        }
        while !batch.isEmpty {
            var refused: [(id: UInt64, error: TransportError)] = []
            for command in batch {
                do throws(TransportError) {
                    try transport.post(command.packet)
                } catch {
                    refused.append((command.id, error))
                }
            }
            batch = state.withLock { state in
                for (id, error) in refused {
                    state.inFlight.removeAll { $0.id == id }
                    if let resumption = state.answers.fulfill(id: id, with: .failed(.transportClosed(error))) {
                        failed.append(resumption)
                    }
                }
                return takeSendableCommands(&state)
            }
        }
        return failed
    }

    /// The commands the controller has room for, taken off the queue as in flight, in
    /// order; `sendingCommands` says whether there are any to send.
    private func takeSendableCommands(_ state: inout State) -> [QueuedCommand] {
        var batch: [QueuedCommand] = []
        while state.commandCredits > 0, !state.waiting.isEmpty {
            let command = state.waiting.removeFirst()
            state.commandCredits -= 1
            state.inFlight.append(command)
            batch.append(command)
        }
        state.sendingCommands = !batch.isEmpty
        return batch
    }

    /// Ends every command's wait with `failure` (the transport closed, the controller failed).
    func failAllCommands(_ state: inout State, with failure: HCIError) -> [Resumption] {
        state.waiting = []
        state.inFlight = []
        return state.answers.fulfillAll(with: .failed(failure))
    }

    // MARK: Receiving

    private func receive(_ packet: HCIPacket) {
        switch packet.type {
        case .event:
            let event: HCIEvent
            do {
                event = try HCIEvent(decoding: packet.bytes)
            } catch {
                let count = state.withLock { state in
                    state.statistics.malformedEvents += 1
                    return state.statistics.malformedEvents
                }
                logger.droppedInput(
                    "malformed event dropped", counter: "malformedEvents", count: count,
                    metadata: ["error": "\(error)", "bytes": .prefix(packet.bytes)])
                return
            }
            handle(event)
        case .acl:
            guard let acl = try? ACLDataPacket(decoding: packet.bytes) else {
                let count = state.withLock { state in
                    state.statistics.malformedACLPackets += 1
                    return state.statistics.malformedACLPackets
                }
                logger.droppedInput("malformed ACL packet dropped", counter: "malformedACLPackets", count: count, metadata: ["bytes": .prefix(packet.bytes)])
                return
            }
            state.withLock { $0.acl }.handler?(acl)
        case .command, .sco, .iso:
            break
        }
    }

    private func handle(_ event: HCIEvent) {
        // The answered command first, then sends that failed. An array, never a
        // `Resumption?`: a continuation's layout is only known at run time, and an optional
        // of it cost a generic metadata lookup on every event, advertising reports included.
        var resumptions: [Resumption] = []
        var releasedACL: [ACLWaiter] = []
        var failedACL: [(ACLWaiter, HCIError)] = []
        var hardwareCode: UInt8?
        var hardwareErrors = 0
        var unmatched: (opcode: HCIOpcode, count: Int)?
        var creditsReturned = false
        let handlers: [EventHandler] = state.withLock { state in
            switch event {
            case let .commandComplete(complete):
                state.commandCredits = Int(complete.numHCICommandPackets)
                if complete.opcode.rawValue != 0 {
                    if let index = state.inFlight.firstIndex(where: { $0.opcode == complete.opcode }) {
                        let command = state.inFlight.remove(at: index)
                        if let completed = state.answers.fulfill(id: command.id, with: .value(complete.returnParameters)) {
                            resumptions.append(completed)
                        }
                    } else {
                        state.statistics.unmatchedCommandCompletes += 1
                        unmatched = (complete.opcode, state.statistics.unmatchedCommandCompletes)
                    }
                }
                creditsReturned = true
            case let .commandStatus(status):
                state.commandCredits = Int(status.numHCICommandPackets)
                if status.opcode.rawValue != 0,
                   let index = state.inFlight.firstIndex(where: { $0.opcode == status.opcode }) {
                    if status.status != .success || state.inFlight[index].completesWithStatus {
                        let command = state.inFlight.remove(at: index)
                        if let completed = state.answers.fulfill(id: command.id, with: .value([status.status.rawValue])) {
                            resumptions.append(completed)
                        }
                    }
                }
                creditsReturned = true
            case let .numberOfCompletedPackets(counts):
                for completion in counts.completions {
                    state.aclFlow.complete(handle: completion.connectionHandle, count: Int(completion.completedPackets))
                }
                releasedACL = grantACLCredits(&state)
            case let .disconnectionComplete(disconnection) where disconnection.status == .success:
                (failedACL, releasedACL) = linkEnded(disconnection.connectionHandle, reason: disconnection.reason, &state)
                state.closedHandles.insert(disconnection.connectionHandle)
            case let .le(.connectionComplete(complete)) where complete.status == .success:
                // On a handle still live we missed its link's end: that link's packets in
                // the controller and its waiting senders go, as at a disconnection.
                (failedACL, releasedACL) = linkEnded(complete.connectionHandle, reason: .unspecifiedError, &state)
                state.closedHandles.remove(complete.connectionHandle)
            case let .le(.enhancedConnectionComplete(complete)) where complete.status == .success:
                (failedACL, releasedACL) = linkEnded(complete.connectionHandle, reason: .unspecifiedError, &state)
                state.closedHandles.remove(complete.connectionHandle)
            case let .hardwareError(error):
                state.statistics.hardwareErrors += 1
                hardwareErrors = state.statistics.hardwareErrors
                hardwareCode = error.hardwareCode
            default:
                break
            }
            return state.eventHandlerList
        }
        if creditsReturned { resumptions += pumpCommands() }
        for resumption in resumptions { resumption.resume() }
        // Sent here, on the thread that brought the credits, in the order they waited.
        for waiter in releasedACL { waiter.onceSent(Result { () throws(HCIError) in try transmit(waiter.packet) }) }
        for (waiter, error) in failedACL { waiter.onceSent(.failure(error)) }
        for handler in handlers { handler(event) }
        if let unmatched {
            logger.droppedInput(
                "Command Complete for no command in flight dropped", counter: "unmatchedCommandCompletes",
                count: unmatched.count, metadata: ["command": "\(unmatched.opcode)"])
        }
        if let hardwareCode { recover(fromHardwareError: hardwareCode, count: hardwareErrors) }
    }

    private func transportClosed(_ error: TransportError?) {
        let failure = HCIError.transportClosed(error)
        let (commands, aclWaiters, statusStreams) = state.withLock { state in
            guard state.closedError == nil else {
                return ([Resumption](), [ACLWaiter](), [AsyncStream<ControllerStatus>.Continuation]())
            }
            state.closedError = failure
            let commands = failAllCommands(&state, with: failure)
            let waiters = state.aclWaiters
            state.aclWaiters = []
            state.status = .closed(error)
            return (commands, waiters, Array(state.statusContinuations.values))
        }
        for command in commands { command.resume() }
        for waiter in aclWaiters { waiter.onceSent(.failure(failure)) }
        deliver(.closed(error), to: statusStreams)
        for stream in statusStreams { stream.finish() }
    }

    // MARK: Subscriptions

    /// Registers a handler for every event, called on the transport's reader thread in
    /// arrival order; handlers registered earlier are called first. Keep it short: it runs
    /// before the next packet is read.
    public func subscribe(_ handler: @escaping EventHandler) -> Subscription {
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.eventHandlers[id] = handler
            return id
        }
        return Subscription { [weak self] in
            _ = self?.state.withLock { $0.eventHandlers.removeValue(forKey: id) }
        }
    }

    /// Every event, as an async sequence, until the subscription's stream is dropped. A
    /// reader that falls `limit` events behind loses the oldest, counted in
    /// ``Statistics/eventStreamDrops``.
    public func events(bufferingNewest limit: Int = 256) -> AsyncStream<HCIEvent> {
        AsyncStream(bufferingPolicy: .bufferingNewest(limit)) { continuation in
            let subscription = subscribe { [weak self] event in
                if case .dropped = continuation.yield(event), let self {
                    let count = self.state.withLock { state in
                        state.statistics.eventStreamDrops += 1
                        return state.statistics.eventStreamDrops
                    }
                    self.logger.droppedForOverflow("event stream full: oldest event dropped", counter: "eventStreamDrops", count: count)
                }
            }
            continuation.onTermination = { _ in subscription.cancel() }
        }
    }

    /// Where incoming ACL data goes (L2CAP). One handler: the layer above demultiplexes.
    public func setACLHandler(_ handler: ACLHandler?) {
        state.withLock { $0.acl.handler = handler }
    }

    /// How many statuses a ``statusUpdates()`` stream keeps for a reader that falls behind.
    /// A controller decides how often Hardware Error comes, so the oldest are dropped and
    /// counted in ``Statistics/statusUpdatesDropped``; the newest, the one that matters,
    /// is always kept.
    public static let statusBufferLimit = 16

    /// Status changes (ready, recovering from a hardware error, closed), starting with the
    /// current one. Keeps the newest ``statusBufferLimit`` for a reader that falls behind.
    public func statusUpdates() -> AsyncStream<ControllerStatus> {
        AsyncStream(bufferingPolicy: .bufferingNewest(Self.statusBufferLimit)) { continuation in
            let id: UInt64? = state.withLock { state in
                continuation.yield(state.status)
                if case .closed = state.status { return nil }
                let id = state.nextID
                state.nextID += 1
                state.statusContinuations[id] = continuation
                return id
            }
            guard let id else {
                continuation.finish()
                return
            }
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.statusContinuations.removeValue(forKey: id) }
            }
        }
    }

    func publish(_ status: ControllerStatus) {
        let streams = state.withLock { state in
            state.status = status
            return Array(state.statusContinuations.values)
        }
        deliver(status, to: streams)
    }

    private func deliver(_ status: ControllerStatus, to streams: [AsyncStream<ControllerStatus>.Continuation]) {
        var dropped = 0
        for stream in streams {
            if case .dropped = stream.yield(status) { dropped += 1 }
        }
        guard dropped > 0 else { return }
        let count = state.withLock { state in
            state.statistics.statusUpdatesDropped += dropped
            return state.statistics.statusUpdatesDropped
        }
        logger.droppedForOverflow("status stream full: oldest status dropped", counter: "statusUpdatesDropped", count: count, dropped: dropped)
    }

    // MARK: ACL data

    /// Sends one ACL packet (already fragmented to the controller's buffer length),
    /// waiting for a buffer credit first. Waiters are served in arrival order.
    public func sendACL(_ packet: ACLDataPacket) async throws(HCIError) {
        let sent: Result<Void, HCIError> = await withCheckedContinuation { continuation in
            do throws(HCIError) {
                if try sendACL(packet, onceSent: { continuation.resume(returning: $0) }) {
                    continuation.resume(returning: .success(()))
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        try sent.get()
    }

    /// Sends one ACL packet now when a credit is free and no one waits for one (true).
    /// Otherwise (false) the packet waits in line for a credit, and `onceSent` learns
    /// whether it was sent: called once, outside the driver's lock, on the thread that
    /// brought the credit back (the reader, handling Number Of Completed Packets) right
    /// after the packet went out, or with why it never will (its link or the transport
    /// ended). A sender that keeps one packet waiting at a time is driven by the credits
    /// themselves, with no task to wake.
    public func sendACL(_ packet: ACLDataPacket, onceSent: @escaping ACLSendCompletion) throws(HCIError) -> Bool {
        let now = try state.withLock { state -> Result<Bool, HCIError> in
            takeCredit(packet.connectionHandle, &state).map { credit in
                if !credit { state.aclWaiters.append(ACLWaiter(packet: packet, onceSent: onceSent)) }
                return credit
            }
        }.get()
        if now { try transmit(packet) }
        return now
    }

    /// Sends one ACL packet when a credit is free now and no one waits for one (true);
    /// false, and nothing sent, otherwise. ``sendACL(_:onceSent:)`` without a completion to
    /// build: a sender that tries this first allocates nothing for a packet that finds its
    /// credit.
    public func sendACLIfCreditFree(_ packet: ACLDataPacket) throws(HCIError) -> Bool {
        guard try state.withLock({ takeCredit(packet.connectionHandle, &$0) }).get() else { return false }
        try transmit(packet)
        return true
    }

    /// A credit for `handle` if one is free and no earlier sender waits (true), none yet
    /// (false), or why there never will be.
    private func takeCredit(_ handle: UInt16, _ state: inout State) -> Result<Bool, HCIError> {
        if let error = state.closedError { return .failure(error) }
        if state.closedHandles.contains(handle) {
            return .failure(.disconnected(connectionHandle: handle, reason: .unknownConnectionIdentifier))
        }
        return .success(state.aclWaiters.isEmpty && state.aclFlow.acquire(handle: handle))
    }

    /// Header and data go to the transport apart: no encoded copy of the packet is made.
    private func transmit(_ packet: ACLDataPacket) throws(HCIError) {
        let header = packet.header
        let posted: Result<Void, TransportError> = withUnsafeBytes(of: header) { header in
            do throws(TransportError) {
                try transport.post(.acl, header: header, body: packet.encodedData)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = posted { throw .transportClosed(error) }
    }

    /// Credits the controller holds free right now (for tests and diagnostics).
    public var availableACLCredits: Int { state.withLock { $0.aclFlow.available } }

    /// A link on `handle` ended (its Disconnection Complete, or a new link's Connection
    /// Complete on the handle when its end was missed): the credits its packets held come
    /// back, and senders still waiting for a credit on it fail rather than send on a dead
    /// handle (the controller would drop the packet and the credit would leak). Returns
    /// the failed senders and those the freed credits now let send.
    private func linkEnded(_ handle: UInt16, reason: HCIErrorCode, _ state: inout State) -> (failed: [(ACLWaiter, HCIError)], released: [ACLWaiter]) {
        state.aclFlow.disconnected(handle: handle)
        let failure = HCIError.disconnected(connectionHandle: handle, reason: reason)
        let failed = state.aclWaiters.filter { $0.packet.connectionHandle == handle }.map { ($0, failure) }
        state.aclWaiters.removeAll { $0.packet.connectionHandle == handle }
        return (failed, grantACLCredits(&state))
    }

    private func grantACLCredits(_ state: inout State) -> [ACLWaiter] {
        var granted: [ACLWaiter] = []
        while let first = state.aclWaiters.first, state.aclFlow.acquire(handle: first.packet.connectionHandle) {
            granted.append(state.aclWaiters.removeFirst())
        }
        return granted
    }

    func resetFlowControl(aclBuffers: Int) {
        state.withLock { state in
            state.aclFlow = ACLFlowControl(total: aclBuffers)
            state.commandCredits = 1
        }
    }

    func store(info: ControllerInfo) {
        state.withLock { state in
            state.info = info
            aclPacketLengthStore.store(info.aclBuffer.packetLength, ordering: .releasing)
        }
    }
}

/// A packet waiting for an ACL credit, and who learns when it went out.
struct ACLWaiter: Sendable {
    let packet: ACLDataPacket
    let onceSent: HCIController.ACLSendCompletion
}

/// A registration that ends when cancelled.
public final class Subscription: Sendable {
    private let onCancel: Lock<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Lock(onCancel)
    }

    public func cancel() {
        onCancel.withLock { action in
            let pending = action
            action = nil
            return pending
        }?()
    }

    deinit { cancel() }
}

/// Where the controller is in its life.
public enum ControllerStatus: Sendable, Equatable {
    case off
    case bringingUp
    case ready(ControllerInfo)
    /// A Hardware Error event arrived; the driver is resetting the controller.
    case recovering(hardwareCode: UInt8)
    /// Bring-up failed; the error says why.
    case failed(HCIError)
    case closed(TransportError?)
}

extension HCIController: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<HCIOpcode, [UInt8], HCIError>) -> Result) -> Result {
        state.withLock { body(&$0.answers) }
    }

    /// A command's deadline passed: its caller gets the timeout. A command already sent may
    /// never get its credit back; without one the stack would wedge, so the slot is taken
    /// as free again (as BlueZ does after a timeout).
    package func deadlinePassed(_ id: UInt64) {
        var timedOut: (opcode: HCIOpcode, sent: Bool, count: Int)?
        let resumptions: [Resumption] = state.withLock { state in
            if let index = state.waiting.firstIndex(where: { $0.id == id }) {
                timedOut = (state.waiting[index].opcode, false, state.statistics.commandTimeouts)
                state.waiting.remove(at: index)
            } else if let index = state.inFlight.firstIndex(where: { $0.id == id }) {
                state.statistics.commandTimeouts += 1
                timedOut = (state.inFlight[index].opcode, true, state.statistics.commandTimeouts)
                if state.commandCredits == 0 { state.commandCredits = 1 }
                state.inFlight.remove(at: index)
            }
            let expired = state.answers.fulfill(id: id, with: .expired)
            return expired.map { [$0] } ?? []
        } + pumpCommands()
        // Logged before the caller hears of it, so the line comes before whatever it does next.
        if let timedOut {
            logger.warning(
                timedOut.sent ? "command timed out: the controller never answered" : "command timed out waiting for a command credit",
                metadata: ["command": "\(timedOut.opcode)", "commandTimeouts": "\(timedOut.count)"])
        }
        for resumption in resumptions { resumption.resume() }
    }

    /// A caller gave up: a command not yet sent is withdrawn. One already sent has taken
    /// effect on the controller, so its caller waits for the answer (or the deadline) to
    /// learn what it must undo.
    package func waitCancelled(_ id: UInt64) {
        let resumption: Resumption? = state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            state.waiting.remove(at: index)
            return state.answers.fulfill(id: id, with: .cancelled)
        }
        resumption?.resume()
    }
}
