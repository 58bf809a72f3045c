import BluetoothCore

/// Scanning for advertisements (the observer role) on one controller, for any number of
/// consumers at once.
///
/// - The controller scans while at least one consumer exists. Their ``ScanParameters`` are
///   combined (see ``ScanConfiguration``); when the combination changes, scanning is
///   disabled, reconfigured and enabled again. Each consumer keeps its own ``ScanFilter``
///   and ``DuplicatePolicy``, applied on the host.
/// - Extended scan commands are used when the controller supports them, legacy ones
///   otherwise (or as ``ScanParameters/useExtendedCommands`` forces). Both report events
///   are accepted whichever was used: controllers do not always answer in kind.
/// - Reports are turned into ``Advertisement`` values on the transport's reader thread,
///   under one lock taken once per event; handlers of ``scan(matching:parameters:onAdvertisement:)``
///   then run right there, synchronously, after the lock is released. Streams get the
///   same values through their continuation.
/// - After a hardware error the driver resets the controller; once it is ready again,
///   scanning is re-enabled for the consumers that remain.
public final class Scanner: Sendable {
    public typealias Handler = @Sendable (Advertisement) -> Void

    /// How many advertisements a stream holds by default for a consumer that is behind;
    /// past this, arriving advertisements are dropped and counted (per stream in
    /// ``AdvertisementStream/droppedCount``, in total in
    /// ``ScanStatistics/streamBufferDrops``), so a slow reader costs bounded memory.
    /// Handlers have no buffer at all.
    public static let streamBufferLimit = 4096

    public let controller: HCIController
    private let now: @Sendable () -> UInt64
    private let state = Lock(State())
    private let streamDrops = DropCounter()

    struct Delivery {
        let sink: Handler
        let advertisement: Advertisement
    }

    struct State: Sendable {
        var consumers: [ScanConsumer] = []
        var pipeline = ScanPipeline()
        /// What the controller was last configured to do; nil while it is not scanning.
        var applied: ScanConfiguration?
        /// Reused between events so that delivering allocates nothing once warm.
        var scratch: [Delivery] = []
        var nextID: UInt64 = 1
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var subscription: Subscription?
        var statusTask: Task<Void, Never>?
    }

    public convenience init(controller: HCIController) {
        self.init(controller: controller, now: { MonotonicClock.nanoseconds() })
    }

    /// `now` gives report timestamps; tests script it.
    init(controller: HCIController, now: @escaping @Sendable () -> UInt64) {
        self.controller = controller
        self.now = now
        let subscription = controller.subscribe { [weak self] event in self?.handle(event) }
        let updates = controller.statusUpdates()
        let task = Task { [weak self] in
            var recovering = false
            for await status in updates {
                guard let self else { return }
                switch status {
                case .recovering:
                    recovering = true
                    self.controllerWasReset()
                case .ready where recovering:
                    recovering = false
                    await self.serialized { await self.reconcile() }
                case let .closed(error):
                    self.failAll(.transportClosed(error))
                default:
                    break
                }
            }
        }
        state.withLock {
            $0.subscription = subscription
            $0.statusTask = task
        }
    }

    deinit {
        state.withLock { $0.statusTask }?.cancel()
    }

    /// What the scanner has received, merged and dropped so far.
    public var statistics: ScanStatistics {
        var statistics = state.withLock { $0.pipeline.statistics }
        statistics.streamBufferDrops = streamDrops.value
        return statistics
    }

    // MARK: Consumers

    /// Advertisements matching `filter`, for as long as the stream is iterated (see
    /// ``AdvertisementStream``). Scanning starts with the first consumer and stops when
    /// the last one's stream ends; a failure to start (or to restart) ends the stream with
    /// the ``HCIError``. `bufferLimit` bounds what waits for this consumer.
    public func advertisements(
        matching filter: ScanFilter = .init(),
        parameters: ScanParameters = .init(),
        bufferLimit: Int = Scanner.streamBufferLimit
    ) -> AdvertisementStream {
        let (stream, consumer) = makeStream(filter: filter, parameters: parameters, bufferLimit: bufferLimit)
        Task { _ = await self.addConsumer(consumer) }
        return stream
    }

    /// ``advertisements(matching:parameters:bufferLimit:)`` that returns once the
    /// controller scans, or throws why it could not start.
    public func scan(
        matching filter: ScanFilter = .init(),
        parameters: ScanParameters = .init(),
        bufferLimit: Int = Scanner.streamBufferLimit
    ) async throws(HCIError) -> AdvertisementStream {
        let (stream, consumer) = makeStream(filter: filter, parameters: parameters, bufferLimit: bufferLimit)
        if let error = await addConsumer(consumer) { throw error }
        return stream
    }

    private func makeStream(filter: ScanFilter, parameters: ScanParameters, bufferLimit: Int) -> (AdvertisementStream, ScanConsumer) {
        let id = makeID()
        let token = ConsumerToken()
        let buffer = AdvertisementBuffer(limit: bufferLimit, totalDrops: streamDrops, logger: controller.logger)
        let consumer = ScanConsumer(
            id: id, filter: filter, parameters: parameters,
            sink: { buffer.append($0) },
            onFailure: { buffer.finish(throwing: $0) },
            token: token
        )
        // The handle holds the scanner strongly: it lives as long as someone holds the stream.
        let handle = AdvertisementStream.Handle(
            buffer: buffer,
            end: {
                guard token.end() else { return }
                buffer.finish()
                // Detached now, so a consumer stopping right after sees it gone; the
                // controller is reconfigured in order with everything else.
                self.detachConsumer(id)
                Task { await self.serialized { await self.reconcile() } }
            },
            stop: {
                guard token.end() else { return }
                // Held advertisements reach the buffer before it is finished.
                await self.removeConsumer(id)
                buffer.finish()
            }
        )
        return (AdvertisementStream(handle: handle), consumer)
    }

    /// The lowest-latency path: `onAdvertisement` runs on the transport's reader thread,
    /// synchronously, for every matching advertisement, with no queue or task in between.
    /// Keep it short; it delays the next packet. Returns once the controller scans.
    public func scan(
        matching filter: ScanFilter = .init(),
        parameters: ScanParameters = .init(),
        onAdvertisement: @escaping @Sendable (Advertisement) -> Void
    ) async throws(HCIError) -> ScanSession {
        let id = makeID()
        let session = ScanSession(scanner: self, id: id)
        let consumer = ScanConsumer(
            id: id, filter: filter, parameters: parameters, sink: onAdvertisement,
            onFailure: { [weak session] in session?.fail($0) }
        )
        if let error = await addConsumer(consumer) { throw error }
        return session
    }

    private func makeID() -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Registers `consumer` and configures the controller; the error when that failed.
    func addConsumer(_ consumer: ScanConsumer) async -> HCIError? {
        await serialized {
            if consumer.token?.hasEnded == true { return nil }
            state.withLock { $0.consumers.append(consumer) }
            let failures = await reconcile()
            return failures.first { $0.id == consumer.id }?.error
        }
    }

    /// Unregisters a consumer and, when it was the last one, disables scanning before
    /// returning.
    func removeConsumer(_ id: UInt64) async {
        detachConsumer(id)
        await serialized { await reconcile() }
    }

    /// Stops delivering to a consumer at once, from any thread; the controller catches up
    /// in the next reconfiguration. When no consumer wants scan responses any more, held
    /// advertisements are handed out first, this consumer included.
    private func detachConsumer(_ id: UInt64) {
        let flushed: [Delivery] = state.withLock { state in
            guard let index = state.consumers.firstIndex(where: { $0.id == id }) else { return [] }
            var deliveries: [Delivery] = []
            let stillActive = state.consumers.contains { $0.id != id && $0.parameters.active }
            // Only when no scan response can come any more (or nobody is left) is there
            // anything to release. Open chains stay: the controller scans on until the next
            // reconfiguration, which drops them when it disables scanning.
            if !stillActive, state.consumers[index].parameters.active || state.consumers.count == 1 {
                state.pipeline.releaseHeld()
                distribute(&state, into: &deliveries)
            }
            state.consumers.remove(at: index)
            return deliveries
        }
        for delivery in flushed { delivery.sink(delivery.advertisement) }
    }

    // MARK: The controller

    /// Brings the controller in line with the consumers. Consumers it could not serve are
    /// removed and told why; returned too, for ``addConsumer(_:)``. Runs serialized.
    @discardableResult
    private func reconcile() async -> [(id: UInt64, error: HCIError)] {
        var failures: [(id: UInt64, error: HCIError)] = []
        while true {
            let (parameters, applied) = state.withLock { ($0.consumers.map(\.parameters), $0.applied) }
            do throws(HCIError) {
                let desired = try ScanConfiguration.combining(parameters, info: controller.info)
                if desired != applied {
                    if let applied {
                        try await applied.disable(on: controller)
                        state.withLock { state in
                            state.applied = nil
                            state.pipeline.scanningStopped()
                        }
                    }
                    if let desired {
                        state.withLock { $0.pipeline.expectScanResponses = desired.active }
                        try await desired.enable(on: controller)
                        state.withLock { $0.applied = desired }
                    }
                }
                state.withLock { state in
                    for index in state.consumers.indices { state.consumers[index].confirmed = true }
                }
                break
            } catch {
                // New consumers caused this; if there are none, nobody can be served.
                let failed: [ScanConsumer] = state.withLock { state in
                    var failed = state.consumers.filter { !$0.confirmed }
                    if failed.isEmpty { failed = state.consumers }
                    state.consumers.removeAll { consumer in failed.contains { $0.id == consumer.id } }
                    return failed
                }
                for consumer in failed {
                    failures.append((consumer.id, error))
                    consumer.onFailure(error)
                }
                if failed.isEmpty { break }
            }
        }
        return failures
    }

    /// The controller was reset: it scans no more, and partial reports will never finish.
    private func controllerWasReset() {
        let deliveries: [Delivery] = state.withLock { state in
            state.applied = nil
            var deliveries: [Delivery] = []
            state.pipeline.flushAll()
            distribute(&state, into: &deliveries)
            return deliveries
        }
        for delivery in deliveries { delivery.sink(delivery.advertisement) }
    }

    private func failAll(_ error: HCIError) {
        let consumers = state.withLock { state in
            defer {
                state.consumers = []
                state.applied = nil
            }
            return state.consumers
        }
        for consumer in consumers { consumer.onFailure(error) }
    }

    /// Runs `body` with no other consumer change or reconfiguration in progress, in FIFO
    /// order: commands to the controller must not interleave.
    @discardableResult
    private func serialized<Result: Sendable>(_ body: () async -> Result) async -> Result {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if !state.busy {
                    state.busy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
        let result = await body()
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
        return result
    }

    // MARK: The hot path (reader thread)

    private func handle(_ event: HCIEvent) {
        guard case let .le(meta) = event else { return }
        switch meta {
        case .advertisingReport, .extendedAdvertisingReport, .directedAdvertisingReport: break
        default: return
        }
        let timestamp = now()
        // The drop counters before and after this event, taken only when one moved.
        var drops: (before: ScanStatistics.Drops, after: ScanStatistics.Drops)?
        var deliveries: [Delivery] = state.withLock { state in
            guard !state.consumers.isEmpty else { return [] }
            let before = state.pipeline.statistics.drops
            state.pipeline.process(meta, timestamp: timestamp)
            if state.pipeline.statistics.drops != before { drops = (before, state.pipeline.statistics.drops) }
            guard !state.pipeline.output.isEmpty else { return [] }
            var deliveries = state.scratch
            state.scratch = []
            distribute(&state, into: &deliveries)
            return deliveries
        }
        if let drops { logDrops(from: drops.before, to: drops.after) }
        guard !deliveries.isEmpty else { return }
        for delivery in deliveries { delivery.sink(delivery.advertisement) }
        deliveries.removeAll(keepingCapacity: true)
        state.withLock { $0.scratch = deliveries }
    }

    private func logDrops(from before: ScanStatistics.Drops, to after: ScanStatistics.Drops) {
        let logger = controller.logger
        if after.malformedReports != before.malformedReports {
            logger.droppedInput("advertising report with a reserved value dropped", counter: "malformedReports", count: after.malformedReports)
        }
        if after.oversizedAdvertisements != before.oversizedAdvertisements {
            logger.droppedInput("extended advertisement over 1650 octets dropped", counter: "oversizedAdvertisements", count: after.oversizedAdvertisements)
        }
        if after.abandonedAssemblies != before.abandonedAssemblies {
            logger.droppedForOverflow("extended advertisement abandoned: too many in reassembly", counter: "abandonedAssemblies", count: after.abandonedAssemblies)
        }
        if after.unfinishedAssemblies != before.unfinishedAssemblies {
            logger.droppedInput("extended advertisement dropped: its last piece never came", counter: "unfinishedAssemblies", count: after.unfinishedAssemblies)
        }
        if after.anonymousReports != before.anonymousReports {
            logger.debug("anonymous extended advertisement dropped", metadata: ["anonymousReports": "\(after.anonymousReports)"])
        }
    }

    /// Moves the pipeline's finished advertisements to the consumers that want them.
    private func distribute(_ state: inout State, into deliveries: inout [Delivery]) {
        for advertisement in state.pipeline.output {
            for index in state.consumers.indices
            where state.consumers[index].filter.matches(advertisement)
                && state.consumers[index].tracker.shouldDeliver(advertisement) {
                deliveries.append(Delivery(sink: state.consumers[index].sink, advertisement: advertisement))
            }
        }
        state.pipeline.output.removeAll(keepingCapacity: true)
    }
}
