import BluetoothCore
import HCI
import L2CAP
import Logging

/// Runs one connection's ``PairingMachine`` over the link: the SMP fixed channel (CID 6)
/// of L2CAP, LE encryption on the HCI ``Connection``, the 30 s SMP timer and the overall
/// pairing deadline, the user's ``PairingDelegate``, and stored keys for re-encryption.
///
/// All machine inputs are fed under one lock, on the thread that delivered them (the
/// transport's reader thread for PDUs and encryption events), so a peer's keys are never
/// seen before the encryption that must precede them. What the machine asks for is
/// carried out in order by one task (PDUs, LE Enable Encryption); user prompts run on
/// tasks of their own and feed their answers back.
public final class SecurityManager: Sendable {
    /// The stored bond for the peer on this link (by its address, or the identity its RPA
    /// resolves to), supplied by whoever keeps bonds; nil when there is none.
    public typealias BondLookup = @Sendable (DeviceAddress) -> Bond?
    public typealias PairingObserver = @Sendable (Result<PairingKeys, PairingError>) -> Void
    /// Told every encryption event of the link after SMP handled it: a peripheral learns
    /// that a bonded central encrypted with its stored key, which no pairing reports.
    public typealias EncryptionObserver = @Sendable (EncryptionEvent) -> Void

    public let connection: Connection
    public let channels: ChannelManager
    public let delegate: (any PairingDelegate)?
    /// The SMP timer (Core Vol 3 Part H 3.4): a running pairing fails when we queued no
    /// PDU for this long.
    public let smpTimeout: Duration
    /// The overall bound of one pairing, in either role, from its start to its end,
    /// however the peer paces it.
    public let pairingDeadline: Duration
    /// Where pairing outcomes, fired timers and dropped PDUs are logged
    /// (``SecurityManager/defaultLogLabel``).
    public let logger: Logger

    /// The SMP layer's logger label.
    public static let defaultLogLabel = "bareble.smp"

    public static let defaultSMPTimeout: Duration = .seconds(30)
    /// Two minutes: a person answering within one SMP timer (30 s) plus 90 s for the rest,
    /// which is about 90 PDUs at most (Secure Connections passkey entry: 20 rounds of four)
    /// and takes well under a second per round trip on any usable link.
    public static let defaultPairingDeadline: Duration = .seconds(120)
    /// Work items (our PDUs, encryption, a pairing's end) that may wait for the worker: a
    /// peer PDU that arrives while this many wait is dropped and counted in
    /// ``droppedPeerPDUs`` (a real pairing never has more than a handful in flight; only a
    /// flood while L2CAP cannot send gets here, and the timers then end the pairing).
    public static let workLimit = 64

    private let storedBond: BondLookup?
    private let observer: PairingObserver?
    private let encryptionObserver: EncryptionObserver?
    private let attempts: RepeatedAttemptsRecord?

    private enum Work: Sendable {
        case send(SMPPDU)
        case encrypt(LongTermKey)
        /// A pairing's end, told to its waiters only once the PDUs before it (our last
        /// keys, a Pairing Failed) were handed to L2CAP: a caller that disconnects as soon
        /// as `pair()` returns must not cut them off (seen: Disconnect overtook our Identity
        /// Information, and the peer never completed its side of the pairing).
        case finish(id: UInt64)
    }

    struct State: Sendable {
        var machine: PairingMachine
        /// Callers waiting for the pairing's end.
        var waits = PendingAnswers<PairingWait, PairingKeys, PairingError>()
        var timers: [TimerKind: ArmedTimer] = [:]
        var nextTimer: UInt64 = 1
        var ended: HCIErrorCode?
        /// Set by a re-encryption in progress: its outcome goes to that caller, not to SMP.
        var reencrypting = false
        /// The end of a pairing nobody was waiting for, kept for ``nextPairingResult()``.
        var unclaimed: Result<PairingKeys, PairingError>?
        /// Items handed to the worker and not yet carried out.
        var queuedWork = 0
        /// The last prompt put to the user: only its answer is taken (see ``queued(_:_:)``).
        var prompt: UInt64 = 0
        /// Pairing ends handed to the worker and not yet told, by id (see ``finish(_:)``).
        var finishing: [UInt64: Result<PairingKeys, PairingError>] = [:]
        var nextFinish: UInt64 = 0
        /// Armed while an end waits for the worker; re-armed whenever the worker carries an
        /// item out (see ``finishWait``).
        var watchdog: DeadlineTimer.Token?
        var droppedPeerPDUs = 0
    }

    let state: Lock<State>
    /// This link's SMP channel: what the worker sends and `close()` removes act on this
    /// link only, never on the next one the controller gives the handle. Nil only while
    /// the initialiser registers it (PDUs that came before are handed over then).
    private let channel = Lock<ChannelRegistration?>(nil)
    private let work: AsyncStream<Work>.Continuation
    private let worker: Lock<Task<Void, Never>?> = Lock(nil)

    /// Create the ``ChannelManager`` before the ``Connector``: L2CAP must have seen the
    /// connection before the Connector hands it out (controller subscribers run in
    /// subscription order), or the SMP channel cannot be served yet.
    ///
    /// - Parameters:
    ///   - localAddress: our address as the peer sees it on this link (c1, f5, f6 bind to
    ///     it); the controller's public address when nil.
    ///   - storedBond: bonds, for LTK requests as peripheral and Security Requests as central.
    ///   - attempts: the repeated-attempts record shared by all links of a host.
    ///   - observer: told every pairing's end (for storing bonds).
    ///   - encryptionObserver: told every encryption event of the link, after SMP.
    ///   - smpTimeout: the SMP timer; the specification's 30 s unless a test shortens it.
    ///   - pairingDeadline: the overall bound of one pairing (``defaultPairingDeadline``).
    public init(
        connection: Connection, channels: ChannelManager, configuration: PairingConfiguration,
        delegate: (any PairingDelegate)? = nil, localAddress: DeviceAddress? = nil,
        storedBond: BondLookup? = nil, attempts: RepeatedAttemptsRecord? = nil,
        observer: PairingObserver? = nil, encryptionObserver: EncryptionObserver? = nil, smpTimeout: Duration = SecurityManager.defaultSMPTimeout,
        pairingDeadline: Duration = SecurityManager.defaultPairingDeadline,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        logger: Logger = Logger(label: SecurityManager.defaultLogLabel)
    ) throws(PairingError) {
        try configuration.validate()
        self.logger = logger
        self.connection = connection
        self.channels = channels
        self.delegate = delegate
        self.storedBond = storedBond
        self.attempts = attempts
        self.observer = observer
        self.encryptionObserver = encryptionObserver
        self.smpTimeout = smpTimeout
        self.pairingDeadline = pairingDeadline
        let local = localAddress ?? DeviceAddress(connection.controller.info?.address ?? .zero, type: .public)
        let machine = PairingMachine(
            role: connection.role == .central ? .initiator : .responder, configuration: configuration,
            localAddress: local, peerAddress: connection.peer, random: random)
        state = Lock(State(machine: machine))
        let (stream, continuation) = AsyncStream.makeStream(of: Work.self)
        work = continuation
        worker.withLock { $0 = Task { [weak self] in
            for await item in stream {
                guard let self else { return }
                await self.perform(item)
                self.state.withLock { state in
                    state.queuedWork -= 1
                    // The worker moved: an end still waiting gets its full wait again.
                    if !state.finishing.isEmpty { self.armWatchdog(&state) }
                }
            }
        } }
        // The link's handlers first: taking the SMP channel hands this manager the PDUs that
        // came before it, on this thread, and the pairing they start can reach the central's
        // LTK request (answered on the reader thread) before this initialiser goes on.
        // Without the provider then, the request was refused and the pairing hung until
        // the SMP timer.
        connection.setEncryptionHandler { [weak self] event in self?.encryptionEvent(event) }
        connection.setLongTermKeyProvider { [weak self] ediv, rand in self?.longTermKey(ediv: ediv, rand: rand) }
        do {
            let registered = try channels.setHandler({ [weak self] event in self?.channelEvent(event) }, channel: .securityManagerProtocol, connection: connection.handle)
            channel.withLock { $0 = registered }
            // A link that ended before this (its handle maybe another link's by now) is not
            // served: the channel registered would be the next link's.
            guard connection.isConnected else {
                channels.removeHandler(registered)
                throw L2CAPError.unknownConnection(handle: connection.handle)
            }
        } catch {
            connection.setEncryptionHandler(nil)
            connection.setLongTermKeyProvider(nil)
            throw .transport("the SMP channel is not available on \(connection): \(error)")
        }
    }

    deinit {
        work.finish()
        worker.withLock { $0?.cancel() }
        state.withLock { state in
            Self.stopTimers(&state)
            if let watchdog = state.watchdog { DeadlineTimer.shared.cancel(watchdog) }
        }
    }

    /// Detaches from the link (channel handler, LTK provider, encryption handler).
    public func close() {
        if let channel = channel.withLock({ $0 }) { channels.removeHandler(channel) }
        connection.setEncryptionHandler(nil)
        connection.setLongTermKeyProvider(nil)
        work.finish()
    }

    var queuedWork: Int { state.withLock { $0.queuedWork } }
    /// Peer PDUs dropped unread because ``workLimit`` items were waiting for the worker.
    public var droppedPeerPDUs: Int { state.withLock { $0.droppedPeerPDUs } }
    /// Whether a pairing is running on this link.
    public var isPairing: Bool { state.withLock { $0.machine.isPairing } }

    /// The method of the running or last pairing.
    public var method: PairingMethod? { state.withLock { $0.machine.method } }

    /// Our Secure Connections OOB data for this link, to hand to the peer out of band.
    public func localOOBData() -> LocalOOBData { state.withLock { $0.machine.localOOBData() } }

    // MARK: Pairing

    /// Pairs now. As central: sends Pairing Request and returns the keys once the link is
    /// encrypted and the keys are exchanged. As peripheral: sends Security Request and
    /// returns when the central has paired (the central decides; it may also just
    /// encrypt with a bond, which returns the stored keys).
    ///
    /// Throws ``PairingError``: the peer's or our refusal with its reason, the 30 s
    /// timeout, the pairing deadline (or, as peripheral, the central not answering within
    /// the SMP timeout), a disconnection, ``PairingError/cancelled`` at once when the
    /// task is cancelled (a pairing we started is then ended), or
    /// ``PairingError/repeatedAttempts(retryAfter:)``.
    public func pair() async throws(PairingError) -> PairingKeys {
        if let wait = remainingWait() { throw .repeatedAttempts(retryAfter: wait) }
        if let delegate, let oob = await delegate.outOfBandData(peer: connection.peer) {
            state.withLock { $0.machine.setPeerOOBData(oob) }
        }
        return try await waitForPairing(starting: true)
    }

    /// Waits for a pairing the peer starts (or returns one that already ended since the
    /// last call): the peripheral's view of a central that pairs on its own.
    public func nextPairingResult() async throws(PairingError) -> PairingKeys {
        if let result = state.withLock({ state in defer { state.unclaimed = nil }; return state.unclaimed }) {
            return try result.get()
        }
        return try await waitForPairing(starting: false)
    }

    /// Central: encrypts with a stored bond instead of pairing. A failure is a hard
    /// ``PairingError/reencryptionFailed(_:)``: the link is never left silently
    /// unencrypted, and no pairing is started behind the caller's back.
    public func encrypt(with bond: Bond, minimumKeySize: Int? = nil) async throws(PairingError) {
        guard let key = bond.keyAsCentral else { throw .invalidConfiguration("the bond holds no LTK to encrypt with as central") }
        guard admits(bond) else {
            throw .invalidConfiguration("the bond with \(bond.peer) was made by legacy pairing, which Secure Connections Only refuses: pair again (the new bond replaces it)")
        }
        let minimum = minimumKeySize ?? state.withLock { $0.machine.configuration.effectiveMinimumKeySize }
        guard Int(key.keySize) >= minimum else { throw .keySizeTooSmall(Int(key.keySize), minimum: minimum) }
        guard claimReencryption() else { throw .busy }
        try await reencrypt(key, minimumKeySize: minimum)
    }

    /// Marks a re-encryption as running unless one or a pairing already is.
    private func claimReencryption() -> Bool {
        state.withLock { state in
            if state.machine.isPairing || state.reencrypting { return false }
            state.reencrypting = true
            return true
        }
    }

    /// Runs a claimed re-encryption (see ``claimReencryption()``) and releases the claim.
    private func reencrypt(_ key: LongTermKey, minimumKeySize minimum: Int) async throws(PairingError) {
        defer { state.withLock { $0.reencrypting = false } }
        do {
            try await connection.enableEncryption(
                longTermKey: key.hciBytes, encryptedDiversifier: key.ediv,
                randomNumber: key.rand, minimumKeySize: minimum)
        } catch let .encryptionFailed(status) {
            throw .reencryptionFailed(status)
        } catch let .disconnected(reason) {
            // A wrong key makes the controller drop the link with MIC Failure.
            throw reason == .connectionTerminatedDueToMICFailure ? .reencryptionFailed(reason) : .disconnected(reason)
        } catch let .encryptionKeyTooShort(size, minimum) {
            throw .keySizeTooSmall(size, minimum: minimum)
        } catch .procedureCancelled {
            throw .cancelled
        } catch {
            throw .transport("\(error)")
        }
    }

    /// The hook for "a GATT operation failed with Insufficient Authentication or
    /// Insufficient Encryption": raises the link's security (encrypting with stored keys
    /// when there are some, pairing otherwise), then runs `operation` once more; a second
    /// failure is the caller's. `isInsufficientSecurity` tells the operation's security
    /// errors from others (SMP does not know ATT's error codes).
    public func retryingAfterPairing<Value: Sendable>(
        isInsufficientSecurity: @Sendable (any Error) -> Bool,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        do {
            return try await operation()
        } catch {
            guard isInsufficientSecurity(error) else { throw error }
            if connection.role == .central, !connection.encryption.isEncrypted, let bond = usableBond() {
                try await encrypt(with: bond)
            } else {
                _ = try await pair()
            }
            return try await operation()
        }
    }

    private func remainingWait() -> Duration? {
        attempts?.withLock { $0.remainingWait(connection.peer.address, at: .now) }
    }

    // MARK: Inputs (reader thread or tasks)

    private func channelEvent(_ event: ChannelEvent) {
        switch event {
        case let .received(bytes):
            feed(.received(bytes))
        case .oversized:
            // No SMP PDU is longer than 65 octets: L2CAP counted it, pairing ignores it and
            // its timer ends a peer that sends nothing valid.
            break
        case let .disconnected(reason):
            let resumptions = state.withLock { state in
                state.ended = reason
                Self.stopTimers(&state)
                return state.waits.fulfillAll(with: .failed(.disconnected(reason)))
            }
            work.finish()
            for resumption in resumptions { resumption.resume() }
        }
    }

    /// Read Encryption Key Size as the machine's input: a failed read is no size at all.
    private func keySizeRead() async -> PairingInput {
        do {
            return .encryptionKeySizeRead(try await connection.readKeySize())
        } catch let .controller(.commandFailed(_, status)) {
            return .encryptionKeySizeUnreadable(status)
        } catch {
            return .encryptionKeySizeUnreadable(.unspecifiedError)
        }
    }

    private func encryptionEvent(_ event: EncryptionEvent) {
        defer { encryptionObserver?(event) }
        let reencrypting = state.withLock { $0.reencrypting }
        if reencrypting { return }
        switch event {
        case let .encrypted(keySize):
            let (pairing, waiting) = state.withLock { ($0.machine.isPairing, $0.waits.unansweredCount > 0) }
            if pairing {
                feed(.encryptionChanged(keySize: keySize))
                if keySize == nil, connection.role == .peripheral {
                    // Encryption Change v1: the size comes from Read Encryption Key Size.
                    Task { [weak self] in
                        guard let self else { return }
                        self.feed(await self.keySizeRead())
                    }
                }
            } else if waiting, connection.role == .peripheral, let bond = storedBond?(connection.peer) {
                // The central answered our Security Request by encrypting with a bond.
                resumeWaiters(.success(PairingKeys(bond: bond, peer: connection.peer)))
            }
        case let .failed(status):
            feed(.encryptionFailed(status))
        case .unencrypted:
            break
        }
    }

    /// Whether `bond`'s key may encrypt this link (``PairingConfiguration/admits(_:)``).
    public func admits(_ bond: Bond) -> Bool { state.withLock { $0.machine.configuration }.admits(bond) }

    /// The peer's stored bond when its key may encrypt this link.
    private func usableBond() -> Bond? { storedBond?(connection.peer).flatMap { admits($0) ? $0 : nil } }

    /// Peripheral: the key for an LTK request: pairing's STK/LTK while pairing, else the
    /// bond's key named by EDIV and Rand.
    private func longTermKey(ediv: UInt16, rand: UInt64) -> [UInt8]? {
        let (pairing, actions) = state.withLock { state in
            let pairing = state.machine.isPairing
            return (pairing, queued(state.machine.handle(.longTermKeyRequested(encryptedDiversifier: ediv, randomNumber: rand)), &state))
        }
        var reply: LongTermKey?
        var rest: [PairingAction] = []
        for action in actions {
            if case let .replyLongTermKey(key) = action { reply = key } else { rest.append(action) }
        }
        execute(rest)
        if pairing { return reply?.hciBytes }
        return usableBond()?.keyAsPeripheral(encryptedDiversifier: ediv, randomNumber: rand)?.hciBytes
    }

    func feed(_ input: PairingInput) {
        var dropped: Int?
        // The bond a pairing would replace, looked up (resolving an RPA costs an AES per
        // bond) before the lock, the store having a lock of its own, and only for the PDU
        // that can start the feature exchange in this role, when it can: a flood of others
        // costs no lookup.
        var storedBond: KeyStrength??
        if case let .received(bytes) = input, let code = bytes.first, self.storedBond != nil,
           code == (connection.role == .central ? SMPCode.pairingResponse : SMPCode.pairingRequest).rawValue,
           state.withLock({ $0.queuedWork < Self.workLimit && $0.machine.isPairing == (connection.role == .central) }) {
            storedBond = .some(self.storedBond?(connection.peer)?.keyStrength)
        }
        let actions = state.withLock { state -> [PairingAction] in
            if case let .some(strength) = storedBond { state.machine.storedBondStrength = strength }
            if case .received = input {
                // The bound on what a peer can make us queue (see workLimit).
                guard state.queuedWork < Self.workLimit else {
                    state.droppedPeerPDUs += 1
                    dropped = state.droppedPeerPDUs
                    return []
                }
                if let attempts {
                    state.machine.repeatedAttemptsBlocked = attempts.withLock { $0.remainingWait(connection.peer.address, at: .now) } != nil
                }
            }
            return queued(state.machine.handle(input), &state)
        }
        if let dropped {
            logger.droppedForOverflow(
                "SMP PDU dropped: the pairing's work queue is full", counter: "droppedPeerPDUs", count: dropped,
                metadata: ["peer": "\(connection.peer)"])
        }
        execute(actions)
    }

    // MARK: Actions

    /// Hands PDUs, encryption and a pairing's end to the worker, arms or stops the timers,
    /// and puts questions to the user, while the machine's lock is still held, so two
    /// threads feeding the machine (a PDU and a user's answer, a timer and a PDU) cannot
    /// swap the order of what it produced; the rest (and the end again, for its log line)
    /// is returned for ``execute(_:)``.
    ///
    /// Each question is numbered under the lock and only the answer to the latest is fed:
    /// a peer that fails a pairing while its prompt is open and starts another must not
    /// have the user's answer to the first (a number compared, a passkey typed) taken for
    /// the second, which nobody compared.
    func queued(_ actions: [PairingAction], _ state: inout State) -> [PairingAction] {
        actions.filter { action in
            switch action {
            case .requestPasskey:
                state.prompt &+= 1
                ask(prompt: state.prompt) { delegate, peer in .passkeyEntered(await delegate?.enterPasskey(peer: peer)) }
                return false
            case let .confirmNumericComparison(value):
                state.prompt &+= 1
                ask(prompt: state.prompt) { delegate, peer in
                    .numericComparisonConfirmed(await delegate?.confirmNumericComparison(value, peer: peer) ?? false)
                }
                return false
            case let .send(pdu):
                enqueue(.send(pdu), &state)
                return false
            case let .startEncryption(key):
                enqueue(.encrypt(key), &state)
                return false
            case .startDeadline:
                arm(.deadline, &state)
                return false
            case .restartTimer:
                arm(.smp, &state)
                return false
            case .stopTimer:
                Self.stopTimers(&state)
                return false
            case let .completed(keys):
                finish(.success(keys), &state)
                return true  // logged by execute(_:)
            case let .failed(error):
                finish(.failure(error), &state)
                return true
            default:
                return true
            }
        }
    }

    func execute(_ actions: [PairingAction]) {
        for action in actions {
            switch action {
            case .send, .startEncryption, .startDeadline, .restartTimer, .stopTimer:
                break  // done under the lock
            case .replyLongTermKey:
                break  // answered by longTermKey(ediv:rand:)
            case let .displayPasskey(passkey):
                if let delegate {
                    let peer = connection.peer
                    Task { await delegate.displayPasskey(passkey, peer: peer) }
                }
            case .requestPasskey, .confirmNumericComparison:
                break  // asked by queued(_:_:)
            case let .securityRequested(requirements):
                securityRequested(requirements)
            case let .completed(keys):
                logger.info("paired", metadata: [
                    "peer": "\(connection.peer)", "method": "\(keys.method.map { "\($0)" } ?? "stored key")",
                    "secureConnections": "\(keys.secureConnections)", "authenticated": "\(keys.authenticated)",
                    "bonded": "\(keys.bonded)", "keySize": "\(keys.keySize)",
                ])
                attempts?.withLock { $0.succeeded(connection.peer.address) }
            case let .failed(error):
                logger.info("pairing failed", metadata: ["peer": "\(connection.peer)", "error": "\(error)"])
                if RepeatedAttempts.counts(error) { attempts?.withLock { $0.failed(connection.peer.address, at: .now) } }
            }
        }
    }

    /// Puts prompt number `prompt` to the user on a task of its own; its answer is fed
    /// only while no later prompt was put.
    private func ask(
        prompt: UInt64, _ question: @escaping @Sendable ((any PairingDelegate)?, DeviceAddress) async -> PairingInput
    ) {
        let (delegate, peer) = (delegate, connection.peer)
        Task { [weak self] in
            let answer = await question(delegate, peer)
            guard let self else { return }
            var stale = false
            let actions = state.withLock { state -> [PairingAction] in
                guard state.prompt == prompt else {
                    stale = true
                    return []
                }
                return queued(state.machine.handle(answer), &state)
            }
            if stale {
                logger.warning("a user's answer to an earlier pairing's prompt ignored", metadata: ["peer": "\(peer)", "prompt": "\(prompt)"])
            }
            execute(actions)
        }
    }

    /// How long a pairing's end waits for a worker that makes no progress: a peer whose
    /// controller takes nothing (credits withheld) held the worker in a send, and `pair()`
    /// behind it past every timer, for as long as the link lived. Counted from the
    /// worker's last item, so a slow controller that still takes PDUs (one buffer, a busy
    /// link) never has the end told before our last keys are out.
    public static let finishWait: Duration = .seconds(5)

    /// Tells the observer, then resumes the waiters, on the worker after it has sent what
    /// was queued before (see ``Work/finish(id:)``), or once the worker has made no
    /// progress for ``finishWait``; on a task of its own when the worker has stopped (the
    /// link ended). Never on the thread that fed the machine, which for a peer's PDU is the
    /// transport's reader: the observer is where a bond store writes its file (fsync, a
    /// file lock), and every link's traffic would wait for it.
    ///
    /// Handed to the worker under the machine's lock, with the PDUs it produced beside it:
    /// ends are told in the order the machine reached them. (Handed over after the lock,
    /// a deadline's end could be overtaken by the refusal of a PDU the peer sent after it,
    /// which the reset machine met first.)
    private func finish(_ result: Result<PairingKeys, PairingError>, _ state: inout State) {
        state.nextFinish &+= 1
        let id = state.nextFinish
        state.finishing[id] = result
        if enqueue(.finish(id: id), &state) {
            if state.watchdog == nil { armWatchdog(&state) }
        } else {
            Task { self.ended(id: id) }
        }
    }

    private func armWatchdog(_ state: inout State) {
        if let watchdog = state.watchdog { DeadlineTimer.shared.cancel(watchdog) }
        state.watchdog = DeadlineTimer.shared.schedule(after: Self.finishWait) { [weak self] in self?.workerStalled() }
    }

    /// The worker made no progress for ``finishWait``: every end still waiting is told.
    private func workerStalled() {
        let stalled = state.withLock { state -> [Result<PairingKeys, PairingError>] in
            state.watchdog = nil
            defer { state.finishing = [:] }
            return state.finishing.sorted { $0.key < $1.key }.map(\.value)
        }
        guard !stalled.isEmpty else { return }
        logger.warning("pairing's end told without waiting for our last PDUs: the controller took nothing for 5 s", metadata: [
            "peer": "\(connection.peer)", "queuedWork": "\(queuedWork)",
        ])
        Task {
            for result in stalled {
                observer?(result)
                resumeWaiters(result)
            }
        }
    }

    /// A pairing's end, told once (by the worker, or by ``workerStalled()``): the observer
    /// first, so a bond is stored before its caller resumes.
    private func ended(id: UInt64) {
        let result = state.withLock { state -> Result<PairingKeys, PairingError>? in
            let result = state.finishing.removeValue(forKey: id)
            if state.finishing.isEmpty, let watchdog = state.watchdog {
                DeadlineTimer.shared.cancel(watchdog)
                state.watchdog = nil
            }
            return result
        }
        guard let result else { return }
        observer?(result)
        resumeWaiters(result)
    }

    /// Hands `item` to the worker; false when the worker has stopped (the link ended).
    @discardableResult
    private func enqueue(_ item: Work, _ state: inout State) -> Bool {
        if case .terminated = work.yield(item) { return false }
        state.queuedWork += 1
        return true
    }

    /// Central: the peripheral asked for security. A bond good enough for what it asks
    /// is used to encrypt; otherwise we pair.
    private func securityRequested(_ requirements: AuthenticationRequirements) {
        if !connection.encryption.isEncrypted, let bond = usableBond(), let key = bond.keyAsCentral,
           bond.authenticated || !requirements.contains(.mitm) {
            // Claimed here, on the reader thread, so a peer repeating its request while
            // we encrypt starts nothing more.
            let minimum = state.withLock { $0.machine.configuration.effectiveMinimumKeySize }
            guard Int(key.keySize) >= minimum else {
                Task { self.observer?(.failure(.keySizeTooSmall(Int(key.keySize), minimum: minimum))) }
                return
            }
            guard claimReencryption() else { return }
            Task { [weak self] in
                do throws(PairingError) {
                    try await self?.reencrypt(key, minimumKeySize: minimum)
                } catch {
                    self?.observer?(.failure(error))
                }
            }
            return
        }
        // Only when idle: a `.pair` during a pairing would end its waiters with busy.
        let actions = state.withLock { state in
            state.machine.isPairing ? [] : queued(state.machine.handle(.pair), &state)
        }
        execute(actions)
    }

    private func perform(_ item: Work) async {
        switch item {
        case let .finish(id):
            ended(id: id)
        case let .send(pdu):
            do {
                if let channel = channel.withLock({ $0 }) {
                    try await channels.send(pdu.encode(), on: channel)
                } else {
                    try await channels.send(pdu.encode(), cid: .securityManagerProtocol, connection: connection.handle)
                }
            } catch {
                // The link is going away; its disconnection ends the pairing.
            }
        case let .encrypt(key):
            do {
                try await connection.enableEncryption(longTermKey: key.hciBytes, encryptedDiversifier: key.ediv, randomNumber: key.rand, minimumKeySize: 1)
                // enableEncryption read the size after a v1 change (nil when the controller
                // has no command for it); the machine compares it with what was negotiated.
                feed(.encryptionKeySizeRead(connection.encryption.keySize))
            } catch let .encryptionFailed(status) {
                feed(.encryptionFailed(status))
            } catch let .controller(.commandFailed(opcode, status)) where opcode == ReadEncryptionKeySize.opcode {
                feed(.encryptionKeySizeUnreadable(status))
            } catch let .controller(error) {
                if case let .commandFailed(_, status) = error { feed(.encryptionFailed(status)) } else { feed(.encryptionFailed(.unspecifiedError)) }
            } catch {
                // Disconnection or timeout: the channel's disconnection or the SMP timer
                // (which nothing restarts while we wait for encryption) ends the pairing.
            }
        }
    }
}
