import Synchronization

/// One party interested in advertisements: its own filter and duplicate memory, where the
/// matching advertisements go, and what to tell it when scanning fails for it.
struct ScanConsumer: Sendable {
    let id: UInt64
    let filter: ScanFilter
    let parameters: ScanParameters
    var tracker: DuplicateTracker
    let sink: Scanner.Handler
    let onFailure: @Sendable (HCIError) -> Void
    /// Set when a stream ended before its consumer was registered, so it never is.
    let token: ConsumerToken?
    /// The controller was configured with this consumer's parameters at least once.
    var confirmed = false

    init(
        id: UInt64, filter: ScanFilter, parameters: ScanParameters, sink: @escaping Scanner.Handler,
        onFailure: @escaping @Sendable (HCIError) -> Void, token: ConsumerToken? = nil
    ) {
        self.id = id
        self.filter = filter
        self.parameters = parameters
        tracker = DuplicateTracker(policy: filter.duplicates, limit: filter.trackedDeviceLimit)
        self.sink = sink
        self.onFailure = onFailure
        self.token = token
    }
}

/// A flag shared between a stream's termination handler and its registration.
final class ConsumerToken: Sendable {
    private let ended = Atomic<Bool>(false)
    /// True for the first caller only: a stream is ended once, however many ways it ends.
    func end() -> Bool { !ended.exchange(true, ordering: .acquiringAndReleasing) }
    var hasEnded: Bool { ended.load(ordering: .acquiring) }
}

/// Counts advertisements stream buffers had to drop. Outside the scanner's lock because
/// the yield happens after the lock is released.
final class DropCounter: Sendable {
    private let count = Atomic<Int>(0)
    /// Returns the new total.
    @discardableResult
    func add() -> Int { count.add(1, ordering: .relaxed).newValue }
    var value: Int { count.load(ordering: .relaxed) }
}
