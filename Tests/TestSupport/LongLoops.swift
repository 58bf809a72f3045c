import Dispatch

/// Long CPU-bound loops in tests (fuzzing, random walks) run inside ``offThePool(_:)`` and
/// call ``yieldPeriodically(every:iteration:)`` on every iteration.
///
/// Tests run in parallel on the cooperative pool, which has one thread per core (two on our
/// machines). A synchronous loop that computes for seconds holds its thread all that time,
/// and with two of them running nothing else moves: a timer that fired, a continuation that
/// was resumed, wait in the queue behind them (a 2 s ATT transaction timeout took 46-77 s in
/// the full run; under AddressSanitizer, a 5 s SMP watchdog warned in a test that takes
/// 0.1 s). So the loops run on one thread of their own, never on the pool: they share it,
/// taking turns at each yield, and the pool's threads stay free for every other test.
public func offThePool<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
    try await withTaskExecutorPreference(LongLoopExecutor.shared, operation: body)
}

/// Puts the rest of the loops back in line every `period` iterations (see ``offThePool(_:)``).
@inlinable
public func yieldPeriodically(every period: Int = 1_000, iteration: Int) async {
    if iteration % period == 0 { await Task.yield() }
}

/// Whether the caller runs on the long loops' queue (what ``offThePool(_:)`` promises).
public var isOffThePool: Bool { DispatchQueue.getSpecific(key: LongLoopExecutor.key) != nil }

/// One serial queue, one thread at a time, for every long loop of the test run.
final class LongLoopExecutor: TaskExecutor {
    static let shared = LongLoopExecutor()
    static let key = DispatchSpecificKey<Void>()
    private let queue = DispatchQueue(label: "bareble.tests.long-loops")

    private init() {
        queue.setSpecific(key: Self.key, value: ())
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
