import ATT
import BluetoothCore

/// The GATT client procedures (Core 5.4 Vol 3 Part G 4) over one ATT client.
///
/// - Discovery asks for whole handle ranges and takes every entry a response packs, so
///   the number of round trips is what the MTU and the server allow, never more: each
///   chain continues after the last handle it was given and stops at the range's end or
///   at Attribute Not Found. Characteristics and includes are discovered over the span of
///   all services at once rather than service by service.
/// - ``discover(remembered:)`` implements GATT Caching (Part G 2.5.2): given a database
///   remembered from an earlier connection, it reads the Database Hash and skips discovery
///   when the hash is unchanged. It also subscribes to Service Changed (indications), and
///   rediscovers only the affected services and reports them on ``databaseChanges``; at
///   most one rediscovery runs and one merged range waits, whatever the server sends.
/// - What a server answers is checked against GATT's rules (DiscoveryRules.swift): a
///   database that breaks them is an ``GATTError/invalidResponse(_:)``, never a trap or a
///   silently wrong copy.
/// - Errors are ``GATTError``: ATT's Error Responses keep the specification's codes, a
///   disconnection carries its HCI reason, and a silent peer ends in ATT's transaction
///   timeout.
/// - Every procedure of more than one request (a discovery, a long read or write, Read
///   Multiple Variable with its completions, a Service Changed rediscovery) ends by
///   ``procedureTimeout`` as a whole (``GATTError/procedureTimedOut(_:after:)``): each
///   answer coming just inside its 30 s cannot stretch it out.
///
/// An actor: procedures may run concurrently (ATT queues their requests), and each sees a
/// consistent ``database``. Long reads and writes are a series of requests that another
/// procedure's requests may interleave with; long and reliable writes take turns at the
/// server's one prepare queue, and writes of one CCCD take turns too.
public actor GATTClient {
    public nonisolated let att: ATTClient
    /// The database discovered (or remembered and confirmed) on this connection.
    public private(set) var database: GATTDatabase?
    /// Told after each Service Changed rediscovery, or its failure; keeps the newest
    /// ``databaseChangesBuffer`` for a slow reader and counts what it drops
    /// (``ServiceChangedStatistics/changesDropped``). Ends when the client is released (a
    /// closed bearer brings no more changes).
    public nonisolated let databaseChanges: AsyncStream<GATTDatabaseChange>
    let changes: AsyncStream<GATTDatabaseChange>.Continuation

    /// Subscriptions per value handle: each consumer's CCCD bits, subscribed or still
    /// subscribing.
    var subscriptions: [UInt16: [UInt64: SubscriptionConsumer]] = [:]
    var nextConsumerID: UInt64 = 1
    /// The CCCD value the server last acknowledged, per value handle (absent: 0).
    var writtenConfigurations: [UInt16: ClientCharacteristicConfiguration] = [:]
    /// CCCD writes that were out when Service Changed named their handle: their answer is
    /// not recorded, as the handle may name another attribute by then.
    var staleConfigurationWrites: Set<UInt16> = []
    /// CCCDs whose last write was cancelled: the server may hold the old value or the new
    /// one (a sent request cannot be withdrawn, a queued one can), so the next
    /// configuration writes whatever it wants, even what is recorded.
    var uncertainConfigurations: Set<UInt16> = []
    /// Who holds each turn (``Turn``), with who waits for it next (resumed with false
    /// when the waiter's task was cancelled).
    var turns: [Turn: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)]] = [:]
    var nextTurnWaiterID: UInt64 = 1
    /// Bumped per value handle when its subscriptions are ended (``unsubscribe(from:)``,
    /// Service Changed), so a `subscribe` suspended in its CCCD write meanwhile knows.
    var subscriptionGenerations: [UInt16: UInt64] = [:]
    var serviceChangedSubscription: ATTSubscription?
    let serviceChangedQueue = ServiceChangedQueue()
    /// Learnt from a Request Not Supported: Read Multiple Variable is not tried again.
    var readMultipleVariableUnsupported = false

    /// What Service Changed brought (Part G 7.1) and what the client did with it; a healthy
    /// server shows indications, rediscoveries and little else.
    public struct ServiceChangedStatistics: Sendable, Equatable {
        /// Well-formed indications.
        public var indications = 0
        /// Values that came as notifications: Service Changed is indicate-only, so they
        /// change nothing.
        public var notificationsIgnored = 0
        /// Values that are not a 4-byte range of valid handles (start 0x0000, start > end).
        public var malformedValues = 0
        /// Ranges folded into the one already waiting instead of a rediscovery of their own.
        public var mergedRanges = 0
        /// Rediscoveries started.
        public var rediscoveries = 0
        /// Rediscoveries that ended in an error (the change still reports it).
        public var failedRediscoveries = 0
        /// Changes ``databaseChanges`` dropped because nobody read the oldest in time.
        public var changesDropped = 0
    }

    /// Counted where the values arrive; readable from any thread.
    public nonisolated var serviceChangedStatistics: ServiceChangedStatistics { serviceChangedQueue.statistics }

    /// How long one procedure may take as a whole; see ``defaultProcedureTimeout``.
    public nonisolated let procedureTimeout: Duration

    /// Two minutes: a full discovery of a large database (some 750 requests) over a link
    /// with a 75 ms connection interval takes about one, and a long read at most 24 requests.
    public static let defaultProcedureTimeout: Duration = .seconds(120)

    public init(att: ATTClient, procedureTimeout: Duration = GATTClient.defaultProcedureTimeout) {
        self.att = att
        self.procedureTimeout = procedureTimeout
        (databaseChanges, changes) = AsyncStream.makeStream(
            of: GATTDatabaseChange.self, bufferingPolicy: .bufferingNewest(Self.databaseChangesBuffer))
    }

    /// Each change carries the whole database, so a reader needs only the newest; a few
    /// are kept so one that reads now and then still sees which ranges changed.
    public static let databaseChangesBuffer = 16

    deinit {
        changes.finish()
    }

    /// Runs `body` as the procedure `name`: every ATT request in it ends by the procedure's
    /// deadline, ``procedureTimeout`` from now. Inside another procedure it keeps that
    /// one's deadline (and that one names the failure).
    /// What procedures take turns at, one at a time: a CCCD's writes (none overtakes
    /// another, and each sees what the last one did), and the server's one prepare queue
    /// (two long or reliable writes at once would have it commit the other's parts).
    enum Turn: Hashable {
        case configuration(valueHandle: UInt16)
        case preparedWrites

        /// The request the turn is for, named when a waiter is cancelled.
        var request: ATTOpcode {
            switch self {
            case .configuration: .writeRequest
            case .preparedWrites: .prepareWriteRequest
            }
        }
    }

    /// Waits until nobody holds `turn`, then holds it until ``endTurn(_:)``. A waiter whose
    /// task is cancelled leaves the queue at once with ``ATTError/cancelled(request:)``.
    func takeTurn(_ turn: Turn) async throws(ATTError) {
        while turns[turn] != nil {
            let id = nextTurnWaiterID
            nextTurnWaiterID += 1
            let resumed = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    if Task.isCancelled { return continuation.resume(returning: false) }
                    turns[turn]?.append((id, continuation))
                }
            } onCancel: {
                // May run before the waiter is queued (then the body sees the cancellation);
                // this task reaches the actor only once the waiter is queued or gone.
                Task { await self.leaveTurn(turn, waiter: id) }
            }
            guard resumed else { throw .cancelled(request: turn.request) }
        }
        turns[turn] = []
    }

    private func leaveTurn(_ turn: Turn, waiter id: UInt64) {
        guard let index = turns[turn]?.firstIndex(where: { $0.id == id }) else { return }
        turns[turn]?.remove(at: index).continuation.resume(returning: false)
    }

    func endTurn(_ turn: Turn) {
        // Each waiter looks again; the first to run takes the turn.
        for waiter in turns.removeValue(forKey: turn) ?? [] { waiter.continuation.resume(returning: true) }
    }

    func procedure<T: Sendable>(_ name: String, _ body: () async throws(GATTError) -> T) async throws(GATTError) -> T {
        if ATTProcedureDeadline.current != nil { return try await body() }
        let timeout = procedureTimeout
        let result: Result<T, GATTError> = await ATTProcedureDeadline.$current.withValue(.now + timeout) {
            do throws(GATTError) { return .success(try await body()) } catch { return .failure(error) }
        }
        switch result {
        case let .success(value): return value
        case .failure(.att(.procedureDeadlinePassed)): throw .procedureTimedOut(name, after: timeout)
        case let .failure(error): throw error
        }
    }

    /// Runs an ATT request, making its failure a ``GATTError``.
    func request<T>(_ body: () async throws(ATTError) -> T) async throws(GATTError) -> T {
        do { return try await body() } catch { throw .att(error) }
    }

    // MARK: Whole database and caching

    /// Brings the client's view of the server's database up to date, and subscribes to
    /// Service Changed when the server has it.
    ///
    /// With a `remembered` database that carries a Database Hash, reads the server's hash
    /// (one Read By Type request) and, when it is unchanged, takes the remembered database
    /// without any discovery request. Otherwise (no remembered copy, no hash, a different
    /// hash) discovers everything and reads the hash to remember with it.
    ///
    /// Keeping the result between connections is the caller's choice (in memory now; a
    /// key store later): a database is only worth remembering for a bonded peer.
    public func discover(remembered: GATTDatabase? = nil) async throws(GATTError) -> GATTDatabase {
        try await procedure("Discovery of the whole database") { () async throws(GATTError) in try await discoverWhole(remembered: remembered) }
    }

    private func discoverWhole(remembered: GATTDatabase?) async throws(GATTError) -> GATTDatabase {
        var discovered: GATTDatabase
        if let remembered, let hash = remembered.databaseHash {
            let current = try await readDatabaseHash()
            if current == hash {
                discovered = remembered
            } else {
                discovered = GATTDatabase(services: try await discoverServices(in: 0x0001...0xFFFF), databaseHash: current)
            }
        } else {
            // The hash before the discovery: a database that changes meanwhile leaves the
            // copy with the older hash, which the next connection finds changed. Read
            // after, a newer hash would vouch for a copy that mixes both.
            let hash = try await readDatabaseHashIfAny()
            discovered = GATTDatabase(services: try await discoverServices(in: 0x0001...0xFFFF), databaseHash: hash)
            if discovered.characteristic(GATTUUID.databaseHash) == nil { discovered.databaseHash = nil }
        }
        database = discovered
        try await subscribeToServiceChanged()
        return discovered
    }

    /// The Database Hash before a first discovery, when nothing says yet whether the server
    /// has one: a server that refuses the read (an Error Response of any code) is taken as
    /// having none, as one without the characteristic answers Attribute Not Found.
    private func readDatabaseHashIfAny() async throws(GATTError) -> [UInt8]? {
        do {
            return try await readDatabaseHash()
        } catch {
            if case .att(.errorResponse) = error { return nil }
            throw error
        }
    }

    /// The Database Hash via Read Using Characteristic UUID, or nil when the server has none.
    /// It is 128 bits (Part G 7.3); any other length could be neither compared nor kept.
    func readDatabaseHash() async throws(GATTError) -> [UInt8]? {
        let found: GATTAttributeValue?
        do {
            found = try await readUsingCharacteristicUUID(GATTUUID.databaseHash).first
        } catch {
            if error.errorCode == .attributeNotFound { return nil }
            throw error
        }
        guard let found else { return nil }
        guard found.value.count == 16 else {
            throw .invalidResponse("the Database Hash at 0x\(hex16(found.handle)) is \(found.value.count) bytes, not 16")
        }
        return found.value
    }

    // MARK: Service Changed (Part G 7.1)

    private func subscribeToServiceChanged() async throws(GATTError) {
        guard serviceChangedSubscription == nil,
              let characteristic = database?.characteristic(GATTUUID.serviceChanged, in: GATTUUID.genericAttribute),
              let cccd = characteristic.clientCharacteristicConfigurationHandle
        else { return }
        let queue = serviceChangedQueue
        // Registered before the CCCD is written, so no indication can slip past. The queue
        // bounds what a server can make the client do; one task at a time drains it.
        let subscription = att.addValueHandler(handle: characteristic.valueHandle) { [weak self] value in
            guard let range = queue.offer(value) else { return }
            Task { await self?.rediscover(from: range) }
        }
        serviceChangedSubscription = subscription
        do {
            try await request { () async throws(ATTError) in
                try await att.write(cccd, value: ClientCharacteristicConfiguration.indication.bytes)
            }
        } catch {
            // Refused (the CCCD wants encryption) or cut short: the next discovery, after
            // pairing, asks again instead of taking indications as enabled.
            subscription.cancel()
            if serviceChangedSubscription === subscription { serviceChangedSubscription = nil }
            throw error
        }
    }

    /// Rediscovers `first`, then whatever range waited meanwhile, until none is left.
    private func rediscover(from first: ClosedRange<UInt16>) async {
        var range: ClosedRange<UInt16>? = first
        while let current = range {
            await serviceChanged(current)
            range = serviceChangedQueue.next()
        }
    }

    /// Invalidates the services `range` touches and discovers them again. On failure the
    /// affected services stay removed (nothing wrong is offered meanwhile), the hash is
    /// forgotten (the copy no longer matches any server state, so it is never trusted as
    /// a cache) and the change reports the error.
    private func serviceChanged(_ range: ClosedRange<UInt16>) async {
        guard var updated = database else { return }
        let affected = updated.invalidate(range)
        database = updated
        endSubscriptions(in: affected)
        let hadHash = updated.databaseHash != nil
        let change: GATTDatabaseChange
        do {
            let services = try await procedure("Rediscovery after Service Changed") { () async throws(GATTError) in
                let services = try await discoverServices(in: affected)
                return (services, hadHash ? try await readDatabaseHash() : nil)
            }
            updated = database ?? updated
            try updated.merge(services.0)
            if updated.databaseHash != nil { updated.databaseHash = services.1 }
            database = updated
            change = GATTDatabaseChange(affectedHandles: affected, database: updated)
        } catch {
            serviceChangedQueue.countFailedRediscovery()
            var left = database ?? updated
            left.databaseHash = nil
            database = left
            change = GATTDatabaseChange(affectedHandles: affected, database: left, failure: error)
        }
        if case .dropped = changes.yield(change) { serviceChangedQueue.countDroppedChange() }
    }
}
