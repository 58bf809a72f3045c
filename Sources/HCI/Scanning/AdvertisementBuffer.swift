import BluetoothCore
import Logging

/// The bounded queue between the reader thread and one stream consumer.
///
/// The reader appends one advertisement at a time; the consumer takes everything waiting
/// in one go, so a consumer that is behind pays one lock and at most one task wake-up per
/// batch, not per advertisement. A consumer that keeps up is woken once per chunk the
/// reader read (``ReaderChunk``), not once per advertisement. A waiting consumer is only
/// told that something came; it takes what waits when it runs, so whatever arrived during
/// its wake-up joins the batch.
/// Storage is swapped, never copied: the consumer hands its emptied array back with each
/// take.
///
/// Bound: `limit` advertisements waiting. What arrives while it is full is dropped and
/// counted; what already waits keeps its order. Dropping the newest (rather than the
/// oldest) means every drop happened after the last advertisement of the batch it is
/// reported with, so a consumer can show the gap exactly where it is.
final class AdvertisementBuffer: Sendable {
    typealias Take = Result<(batch: [Advertisement], dropped: Int)?, any Error>

    private struct State {
        var pending: [Advertisement] = []
        var dropped = 0
        var waiter: CheckedContinuation<Void, Never>?
        /// An empty array the consumer gave back, used as the next `pending`.
        var spare: [Advertisement] = []
        /// ``wake()`` was called: the next take returns at once, even empty.
        var wakePending = false
        /// No more advertisements will be appended: after `pending`, the end (or `failure`).
        var finished = false
        var failure: (any Error)?
    }

    let limit: Int
    private let state = Lock(State())
    /// The scanner's total over all streams, for ``ScanStatistics/streamBufferDrops``.
    private let totalDrops: DropCounter
    private let logger: Logger

    init(limit: Int, totalDrops: DropCounter, logger: Logger) {
        self.limit = max(1, limit)
        self.totalDrops = totalDrops
        self.logger = logger
    }

    /// Advertisements dropped so far because the buffer was full.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Reader thread: queue `advertisement`, or count it dropped.
    func append(_ advertisement: Advertisement) {
        var dropped = 0
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            guard state.pending.count < limit else {
                state.dropped += 1
                dropped = totalDrops.add()
                return nil
            }
            state.pending.append(advertisement)
            return Self.removeWaiter(&state)
        }
        if dropped > 0 {
            logger.droppedForOverflow("advertisement dropped: a scan stream's reader fell behind", counter: "streamBufferDrops", count: dropped)
        }
        // Told once the reader has handled its whole chunk: a consumer that keeps up would
        // otherwise be woken for every advertisement, not for every batch.
        if let waiter { ReaderChunk.atEnd { waiter.resume() } }
    }

    /// No more advertisements: the consumer gets what waits, then the end, or `failure`.
    func finish(throwing failure: (any Error)? = nil) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = failure
            return Self.removeWaiter(&state)
        }
        waiter?.resume()
    }

    /// Makes the consumer's current or next ``take(returning:)`` return now, with an empty
    /// batch if nothing waits: a tool that also has timers to serve is not stuck in a
    /// quiet scan.
    func wake() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            state.wakePending = true
            return Self.removeWaiter(&state)
        }
        waiter?.resume()
    }

    /// Everything waiting (suspending while nothing does) and the drop count at that
    /// moment; nil once finished and drained. `spare` is the caller's previous batch,
    /// emptied, whose storage is reused. A cancelled task gets nil.
    func take(returning spare: [Advertisement]) async throws -> (batch: [Advertisement], dropped: Int)? {
        state.withLock { state in
            if state.spare.capacity < spare.capacity { state.spare = spare }
        }
        while true {
            let ready: Take? = state.withLock { state in
                if !state.pending.isEmpty { return .success(Self.takeAll(&state)) }
                if state.finished { return Self.ending(&state) }
                if state.wakePending {
                    state.wakePending = false
                    return .success(([], state.dropped))
                }
                return nil
            }
            if let ready { return try ready.get() }
            if Task.isCancelled { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let waits: Bool = state.withLock { state in
                        guard state.pending.isEmpty, !state.finished, !state.wakePending, !Task.isCancelled else { return false }
                        state.waiter = continuation
                        return true
                    }
                    if !waits { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { Self.removeWaiter(&$0) }
                waiter?.resume()
            }
        }
    }

    private static func removeWaiter(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        defer { state.waiter = nil }
        return state.waiter
    }

    private static func takeAll(_ state: inout State) -> (batch: [Advertisement], dropped: Int) {
        var batch = state.spare
        state.spare = []
        swap(&batch, &state.pending)
        return (batch, state.dropped)
    }

    private static func ending(_ state: inout State) -> Take {
        if let failure = state.failure {
            state.failure = nil
            return .failure(failure)
        }
        return .success(nil)
    }
}
