import BluetoothCore
import Dispatch
import Logging
import Synchronization

/// The ATT server of one bearer (Core 5.4 Vol 3 Part F 3.3, 3.4), serving an
/// ``ATTAttributeStore``.
///
/// It shares the bearer with an ``ATTClient``, which owns and starts it and hands over the
/// peer's requests, commands, confirmations and invalid requests on the bearer's thread
/// (`ATTClient(bearer:server:)`): one link is then GATT client and server at once.
///
/// - Requests are answered one at a time, in arrival order, by one task per burst that
///   drains a bounded inbox; the reader thread only appends and never waits. A client may
///   have one request outstanding (3.3.2), so the inbox holds at most one request, plus
///   commands up to ``Configuration/commandInboxLimit`` (past it a command is dropped and
///   counted: a command has no answer to withhold).
/// - Except the hot case: a Read or Read Blob Request of a value the store holds (no
///   authorization, no application handler; ``ATTAttributeStore/storedValue(_:context:)``)
///   that finds nothing waiting before it is answered on the bearer's thread, with the same
///   checks, and no task (a task hop per read cost more than everything else a read does),
///   when the bearer's `send` never waits (``ATTBearer/sendNeverWaits``: our L2CAP, not a
///   kernel socket).
/// - A second request before the first is answered breaks the sequential protocol
///   (3.3.2): the bearer is closed as a protocol violation, as BlueZ does, because the
///   client can no longer tell which response answers which request.
/// - A request that does not decode, or is longer than the ATT_MTU, is answered with
///   Invalid PDU (0x04); an unknown request with Request Not Supported (0x06). Commands are
///   never answered, not even with an error (3.3.1, 3.4.5.3): refused and unknown ones are
///   counted.
/// - Notifications and indications: see ``notify(handle:value:)``, ``indicate(handle:value:)``
///   and ``notifyMultiple(_:)``.
public final class ATTServer: Sendable {
    /// Bounds and limits; the defaults are the specification's values where it gives one.
    public struct Configuration: Sendable, Hashable {
        /// Our receive MTU, announced in Exchange MTU Responses (capped by the bearer's
        /// ``ATTBearer/maximumMTU``).
        public var receiveMTU: UInt16 = ATTConstants.defaultClientMTU
        /// Prepared writes one bearer may queue: entries, and value octets in all.
        public var prepareQueueEntries = 32
        public var prepareQueueBytes = 4096
        /// Commands waiting behind the request or command being handled.
        public var commandInboxLimit = 64
        /// Indications waiting behind the one outstanding.
        public var indicationQueueLimit = 32
        /// Notifications waiting to be sent on a bearer whose `send` may wait (a kernel
        /// socket): PDUs, and their octets in all. Past either, ``ATTServer/notify(handle:value:)``
        /// throws ``ATTServerError/outgoingQueueFull``, as L2CAP's host bound (the same
        /// figures) does on our own bearer.
        public var waitingNotificationLimit = 256
        public var waitingNotificationBytes = 65_536
        /// How long an indication may wait for its confirmation (3.3.3).
        public var indicationTimeout: Duration = ATTConstants.transactionTimeout
        /// How long a request may take in all (``ATTServerContext/requestDeadline``): its
        /// application handlers together, not each (a Read Multiple may name one slow
        /// handler hundreds of times). Under the client's 30 s transaction timeout, so a
        /// client gets Unlikely Error, not a dropped link.
        public var requestDeadline: Duration = .seconds(20)

        public init() {}
    }

    /// What the server did and refused; a healthy client leaves everything after
    /// `errorResponsesSent` at zero.
    public struct Statistics: Sendable, Equatable {
        /// Requests answered, with a response or an Error Response.
        public var requestsAnswered = 0
        public var errorResponsesSent = 0
        public var commandsPerformed = 0
        /// Commands refused by a check, the store or the store's admission: not answered.
        public var commandsRefused = 0
        /// Commands with an opcode this server does not know, or that do not decode.
        public var commandsIgnored = 0
        /// Commands dropped because ``Configuration/commandInboxLimit`` were waiting.
        public var commandsDroppedForFullInbox = 0
        /// Signed Write Commands whose signature did not verify (or that had no key to).
        public var signedWritesRejected = 0
        /// Requests that did not decode or were longer than the ATT_MTU (Invalid PDU).
        public var invalidRequests = 0
        /// A request while another was unanswered: the bearer was closed.
        public var protocolViolations = 0
        /// Confirmations with no indication outstanding: ignored.
        public var unexpectedConfirmations = 0
        public var indicationsSent = 0
        public var indicationsConfirmed = 0
        public var indicationsTimedOut = 0
        /// The most PDUs the inbox has held at once.
        public var inboxHighWater = 0

        /// Every command from the peer, whatever became of it.
        public var commandsReceived: Int {
            commandsPerformed + commandsRefused + commandsIgnored + signedWritesRejected + commandsDroppedForFullInbox
        }
    }

    public let bearer: any ATTBearer
    public let configuration: Configuration
    let processor: ATTRequestProcessor
    let verifier: ATTSignatureVerifier?
    /// Where answers and indications are sent when the bearer's `send` may wait (a kernel
    /// socket holds writes while it pairs), in order: neither the bearer's thread nor a
    /// thread of the tasks' pool (where the kernel pairing agent answers) waits in it. nil
    /// when `send` never waits: then they are sent where they are made, and reads of stored
    /// values are answered on the thread that delivered them.
    let waitingSends: DispatchQueue?
    /// Set on `waitingSends`: a send made from it (an observer told of a stop) runs there
    /// at once instead of waiting for itself.
    static let waitingSendsKey = DispatchSpecificKey<Void>()
    let state: Lock<State>

    enum Item: Sendable {
        /// `admitted`: the store's admission (robust caching) already let it through; it
        /// must not be asked twice, since asking changes a change-unaware client's state.
        case request(ATTPDU, admitted: Bool)
        case command(ATTPDU)
        /// A request that did not decode or was too long: answered with Invalid PDU.
        case invalidRequest(ATTOpcode)
    }

    struct State: Sendable {
        var context: ATTServerContext
        var inbox: [Item] = []
        var commandsInInbox = 0
        var draining = false
        var requestOutstanding: ATTOpcode?
        var prepareQueue: ATTPrepareQueue
        var mtuExchanged = false
        var closedReason: ATTBearerError?
        /// Given by the client sharing the bearer: ends the client too and closes the bearer.
        var closeLink: (@Sendable (ATTBearerError) -> Void)?
        var statistics = Statistics()
        var indications = PendingAnswers<IndicationWait, Bool, ATTServerError>()
        var indicationInFlight: (id: UInt64, deadline: DeadlineTimer.Token)?
        var indicationQueue: [(id: UInt64, bytes: [UInt8])] = []
        /// Notifications on `waitingSends`, not yet sent: PDUs and octets.
        var waitingNotifications = (count: 0, bytes: 0)
        /// Test hook: told the number of requests answered after each answer has gone out.
        var answerObserver: (@Sendable (Int) -> Void)?
        var mtuObserver: (@Sendable (UInt16) -> Void)?
    }

    /// - Parameters:
    ///   - bearerID: names the bearer in every ``ATTServerContext`` (the HCI connection
    ///     handle, or a kernel socket's number).
    ///   - verifier: checks Signed Write Commands against the peer's bond; without one they
    ///     are all ignored and counted.
    public init(
        bearer: any ATTBearer, store: any ATTAttributeStore, bearerID: UInt16, peer: DeviceAddress? = nil,
        security: ATTLinkSecurity = .open, configuration: Configuration = Configuration(),
        verifier: ATTSignatureVerifier? = nil, logger: Logger = Logger(label: ATTClient.defaultLogLabel)
    ) {
        self.bearer = bearer
        self.configuration = configuration
        self.logger = logger
        let receiveMTU = max(ATTConstants.minimumLEMTU, min(configuration.receiveMTU, bearer.maximumMTU ?? configuration.receiveMTU))
        processor = ATTRequestProcessor(store: store, receiveMTU: receiveMTU)
        self.verifier = verifier
        waitingSends = bearer.sendNeverWaits ? nil : DispatchQueue(label: "bareble.att.server-sends")
        waitingSends?.setSpecific(key: Self.waitingSendsKey, value: ())
        state = Lock(State(
            context: ATTServerContext(
                bearer: bearerID, instance: Self.instances.add(1, ordering: .relaxed).newValue, peer: peer, security: security),
            prepareQueue: ATTPrepareQueue(entryLimit: configuration.prepareQueueEntries, byteLimit: configuration.prepareQueueBytes)))
    }

    /// The last ``ATTServerContext/instance`` given.
    private static let instances = Atomic<UInt64>(0)

    /// Where the server logs what it refused or dropped (the ATT label, as the client).
    public let logger: Logger

    /// Who the peer is and how the link is protected, as requests are checked against now.
    public var context: ATTServerContext { state.withLock { $0.context } }
    public var statistics: Statistics { state.withLock { $0.statistics } }
    public var mtu: UInt16 { bearer.mtu }
    /// Why the server stopped, or nil while it serves.
    public var closedReason: ATTBearerError? { state.withLock { $0.closedReason } }

    /// The link's protection changed (encryption started, a pairing finished): requests
    /// handled from now on are checked against `security`.
    public func updateSecurity(_ security: ATTLinkSecurity) { state.withLock { $0.context.security = security } }

    /// The peer's identity became known (its bond was found after it resolved).
    public func updatePeer(_ peer: DeviceAddress?) { state.withLock { $0.context.peer = peer } }

    /// `observer` learns the ATT_MTU in effect once the client's Exchange MTU settled it
    /// (its first; later ones change nothing and are not told), as the response goes out.
    /// On a bearer whose MTU the layer below decides, that MTU.
    public func observeMTU(_ observer: @escaping @Sendable (UInt16) -> Void) {
        state.withLock { $0.mtuObserver = observer }
    }

    // MARK: From the client (the bearer's thread)

    /// Called once by the client that starts the bearer: `closeLink` ends the client too
    /// and closes the bearer, for a violation or an indication timeout.
    func attach(closeLink: @escaping @Sendable (ATTBearerError) -> Void) {
        state.withLock { $0.closeLink = closeLink }
    }

    /// Test hook: `observer` learns the number of requests answered after each answer has
    /// been handed to the bearer, so tests can send the next request without sleeping.
    func observeAnswers(_ observer: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.answerObserver = observer }
    }

    /// A request, command or confirmation from the peer.
    func receive(_ pdu: ATTPDU) {
        let opcode = pdu.opcode
        switch opcode.kind {
        case .confirmation: confirmationReceived()
        case .command: enqueue(.command(pdu), opcode)
        // Anything without the Command Flag that this stack does not model is a request
        // it does not support (3.3.1, 3.4.1.1).
        case .request, nil: enqueue(.request(pdu, admitted: false), opcode)
        case .response, .notification, .indication: break
        }
    }

    /// A PDU from the peer that did not decode, or was longer than the ATT_MTU.
    func receiveInvalid(_ opcode: ATTOpcode) {
        if opcode.isCommand {
            dropped(\.commandsIgnored, "commandsIgnored", "invalid command ignored", opcode: opcode)
        } else if opcode.kind == .request || opcode.kind == nil {
            enqueue(.invalidRequest(opcode), opcode)
        }
    }

    /// The bearer ended below us or the client closed it.
    func bearerEnded(_ reason: ATTBearerError) {
        stop(reason, closeLink: false)
    }

    private func enqueue(_ item: Item, _ opcode: ATTOpcode) {
        enum Outcome { case none, startDrain, answerHere, violation(ATTOpcode), inboxFull(Int) }
        let outcome: Outcome = state.withLock { state in
            guard state.closedReason == nil else { return .none }
            if case .command = item {
                guard state.commandsInInbox < configuration.commandInboxLimit else {
                    state.statistics.commandsDroppedForFullInbox += 1
                    return .inboxFull(state.statistics.commandsDroppedForFullInbox)
                }
                state.commandsInInbox += 1
            } else {
                if let outstanding = state.requestOutstanding {
                    state.statistics.protocolViolations += 1
                    return .violation(outstanding)
                }
                state.requestOutstanding = opcode
                // Nothing before it: this thread may answer it, holding the drain's place.
                if waitingSends == nil, state.inbox.isEmpty, !state.draining, case .request(let pdu, _) = item, pdu.isReadOfOneValue {
                    state.draining = true
                    return .answerHere
                }
            }
            state.inbox.append(item)
            state.statistics.inboxHighWater = max(state.statistics.inboxHighWater, state.inbox.count)
            guard !state.draining else { return .none }
            state.draining = true
            return .startDrain
        }
        switch outcome {
        case .none: break
        case .startDrain: Task { await self.drain() }
        case .answerHere:
            if case .request(let pdu, _) = item { answerHere(pdu) }
        case .violation(let outstanding):
            logger.warning("request while another was unanswered: bearer closed", metadata: ["outstanding": "\(outstanding)", "received": "\(opcode)"])
            stop(.protocolViolation(request: outstanding, received: opcode), closeLink: true)
        case .inboxFull(let count):
            logger.droppedForOverflow("command dropped: the inbox is full", counter: "commandsDroppedForFullInbox", count: count, metadata: ["opcode": "\(opcode)"])
        }
    }

    /// Answers a read on the bearer's thread when the store has the value at hand; else
    /// hands it, admitted, to a drain task. The drain's place is held meanwhile, so nothing
    /// overtakes it.
    private func answerHere(_ request: ATTPDU) {
        let context = state.withLock { $0.context }
        let response: ATTPDU
        if let code = processor.store.admit(request, context: context) {
            response = .errorResponse(.init(
                requestOpcodeInError: request.opcode, attributeHandleInError: request.firstHandle, errorCode: code))
        } else if let answer = processor.answerWithoutWaiting(request, context: context, mtu: Int(bearer.mtu)) {
            response = answer
        } else {
            let open = state.withLock { state in
                guard state.closedReason == nil else { return false }
                state.inbox.insert(.request(request, admitted: true), at: 0)
                return true
            }
            if open { Task { await self.drain() } }
            return
        }
        send(response: response)
        // A PDU queued meanwhile (another thread's, or one `send` let in on a loopback)
        // gets its drain now.
        let more = state.withLock { state in
            if state.inbox.isEmpty || state.closedReason != nil {
                state.draining = false
                return false
            }
            return true
        }
        if more { Task { await self.drain() } }
    }

    // MARK: The serial worker

    private func drain() async {
        while let item = nextItem() {
            switch item {
            case .request(let pdu, let admitted): await answer(pdu, admitted: admitted)
            case .invalidRequest(let opcode):
                dropped(\.invalidRequests, "invalidRequests", "invalid request answered with Invalid PDU", opcode: opcode)
                send(response: .errorResponse(.init(requestOpcodeInError: opcode, attributeHandleInError: 0, errorCode: .invalidPDU)))
            case .command(let pdu): await perform(pdu)
            }
        }
    }

    private func nextItem() -> Item? {
        state.withLock { state in
            guard state.closedReason == nil, !state.inbox.isEmpty else {
                state.draining = false
                return nil
            }
            let item = state.inbox.removeFirst()
            if case .command = item { state.commandsInInbox -= 1 }
            return item
        }
    }

    private func answer(_ request: ATTPDU, admitted: Bool) async {
        let (serving, queue) = state.withLock { ($0.context, $0.prepareQueue) }
        var context = serving
        context.requestDeadline = .now + configuration.requestDeadline
        let response: ATTPDU
        if !admitted, let code = processor.store.admit(request, context: context) {
            response = .errorResponse(.init(
                requestOpcodeInError: request.opcode, attributeHandleInError: request.firstHandle, errorCode: code))
        } else {
            var queue = queue
            response = await processor.answer(request, context: context, mtu: Int(bearer.mtu), queue: &queue)
            state.withLock { [queue] in $0.prepareQueue = queue }
        }
        if case .exchangeMTURequest(let exchange) = request, case .exchangeMTUResponse(let ours) = response {
            recordMTU(client: exchange.clientRxMTU, server: ours.serverRxMTU)
        }
        send(response: response)
    }

    /// The first Exchange MTU sets the bearer's ATT_MTU to min(client, server), never
    /// below 23 (Vol 3 Part G 5.2.1); later ones are answered and change nothing. Recorded
    /// before the response goes out, so the client's next request, which may use the new
    /// MTU as soon as it has the response, is never judged by the old one.
    private func recordMTU(client: UInt16, server: UInt16) {
        let (first, observer) = state.withLock { state in
            defer { state.mtuExchanged = true }
            return (!state.mtuExchanged, state.mtuObserver)
        }
        guard first else { return }
        if !bearer.mtuIsNegotiatedBelow { bearer.mtuExchanged(max(ATTConstants.minimumLEMTU, min(client, server))) }
        observer?(bearer.mtu)
    }

    private func send(response: ATTPDU) {
        let bytes = response.encode()
        let open: (answered: Int, observer: (@Sendable (Int) -> Void)?)? = state.withLock { state in
            guard state.closedReason == nil else { return nil }
            // Cleared before sending: the client may send its next request the moment the
            // response is out, even from inside `send` on a loopback.
            state.requestOutstanding = nil
            state.statistics.requestsAnswered += 1
            if case .errorResponse = response { state.statistics.errorResponsesSent += 1 }
            return (state.statistics.requestsAnswered, state.answerObserver)
        }
        guard let open else { return }
        // Straight from here when `send` never waits: no closure is made for each answer.
        guard let waitingSends else { return transmit(bytes, answered: open.answered, observer: open.observer) }
        waitingSends.async { self.transmit(bytes, answered: open.answered, observer: open.observer) }
    }

    private func transmit(_ bytes: [UInt8], answered: Int, observer: (@Sendable (Int) -> Void)?) {
        do throws(ATTBearerError) {
            try bearer.send(bytes)
        } catch {
            stop(error, closeLink: false)
            return
        }
        observer?(answered)
    }

    /// Runs a send on `waitingSends` when the bearer's `send` may wait, else here.
    func sendWhereItMayWait(_ send: @escaping @Sendable () -> Void) {
        if let waitingSends { waitingSends.async(execute: send) } else { send() }
    }

    private func perform(_ command: ATTPDU) async {
        let context = state.withLock { $0.context }
        let outcome: ATTCommandOutcome = processor.store.admit(command, context: context) == nil
            ? await processor.perform(command, context: context, verifier: verifier)
            : .refused
        switch outcome {
        case .performed: state.withLock { $0.statistics.commandsPerformed += 1 }
        case .refused: state.withLock { $0.statistics.commandsRefused += 1 }
        case .signatureRejected: dropped(\.signedWritesRejected, "signedWritesRejected", "Signed Write Command rejected: no key for its sender, a SignCounter already used, or a signature that did not verify", opcode: command.opcode)
        case .unknown: dropped(\.commandsIgnored, "commandsIgnored", "unknown command ignored", opcode: command.opcode)
        }
    }

    /// Counts a PDU the server refused under `counter` (named `name` in the log line) and
    /// logs it: one warning each, with the running count.
    func dropped(_ counter: WritableKeyPath<Statistics, Int>, _ name: String, _ message: Logger.Message, opcode: ATTOpcode) {
        let count = state.withLock { state in
            state.statistics[keyPath: counter] += 1
            return state.statistics[keyPath: counter]
        }
        logger.droppedInput(message, counter: name, count: count, metadata: ["opcode": "\(opcode)"])
    }

    // MARK: The end

    /// Stops serving for `reason` (the first reason wins): waiting indications fail, the
    /// inbox and the prepare queue are dropped, the store forgets the bearer; with
    /// `closeLink` the client and the bearer are ended too.
    func stop(_ reason: ATTBearerError, closeLink: Bool, inFlightIndicationError: ATTServerError? = nil) {
        typealias Resumption = PendingAnswers<IndicationWait, Bool, ATTServerError>.Resumption
        let ended: (resumptions: [Resumption], closeLink: (@Sendable (ATTBearerError) -> Void)?, context: ATTServerContext)? =
            state.withLock { state in
                guard state.closedReason == nil else { return nil }
                state.closedReason = reason
                var resumptions: [Resumption] = []
                if let inFlight = state.indicationInFlight {
                    DeadlineTimer.shared.cancel(inFlight.deadline)
                    let error = inFlightIndicationError ?? .bearerClosed(reason)
                    if let resumption = state.indications.fulfill(id: inFlight.id, with: .failed(error)) {
                        resumptions.append(resumption)
                    }
                }
                state.indicationInFlight = nil
                state.indicationQueue = []
                resumptions += state.indications.fulfillAll(with: .failed(.bearerClosed(reason)))
                state.inbox = []
                state.commandsInInbox = 0
                state.requestOutstanding = nil
                state.prepareQueue.removeAll()
                return (resumptions, state.closeLink, state.context)
            }
        guard let ended else { return }
        processor.store.bearerClosed(ended.context)
        if closeLink {
            if let close = ended.closeLink { close(reason) } else { bearer.close(reason: reason) }
        }
        for resumption in ended.resumptions { resumption.resume() }
    }
}

extension ATTPDU {
    /// A Read or Read Blob Request: one attribute's value, which a store may hold.
    var isReadOfOneValue: Bool {
        switch self {
        case .readRequest, .readBlobRequest: true
        default: false
        }
    }

    /// The handle a request names first, for an Error Response about the request as a
    /// whole; 0x0000 when it names none.
    var firstHandle: UInt16 {
        switch self {
        case .findInformationRequest(let r): r.startingHandle
        case .findByTypeValueRequest(let r): r.startingHandle
        case .readByTypeRequest(let r): r.startingHandle
        case .readByGroupTypeRequest(let r): r.startingHandle
        case .readRequest(let r): r.attributeHandle
        case .readBlobRequest(let r): r.attributeHandle
        case .readMultipleRequest(let r): r.setOfHandles.first ?? 0
        case .readMultipleVariableRequest(let r): r.setOfHandles.first ?? 0
        case .writeRequest(let r): r.attributeHandle
        case .prepareWriteRequest(let r): r.attributeHandle
        default: 0
        }
    }
}
