import Foundation
import Glibc

/// Runs a test body that computes for seconds (fuzzing, random walks, tens of thousands of
/// saves) on threads of its own at the lowest priority (nice 19), off the cooperative pool.
///
/// Tests run in parallel on the cooperative pool, which has one thread per core (two on our
/// machines). A body that computes for seconds holds its thread all that time, and with two
/// of them running nothing else moves: a timer that fired, a continuation that was resumed,
/// a scripted answer a test is about to inject, all wait behind them. Under
/// AddressSanitizer such bodies take about half of the unit suites' CPU, and tests whose
/// procedures have a 10 s deadline failed now and then because the test's own next step
/// came later than that (`twoConnectionsAreIndependent` in CI; a GATT handler's deadline,
/// `handlersProduceAndConsumeValues`, here). On these threads the rest of the run goes
/// first, and such bodies take what CPU it leaves.
///
/// Everything the body awaits runs there too (a task executor preference is inherited by
/// child tasks), except code isolated to an actor.
///
/// Only for bodies that compute: one that holds a lock other threads wait for with a
/// deadline is starved at nice 19 while it holds it, and their deadlines run out (200 bond
/// saves from 8 threads, one of them this one, failed a save on the store's 10 s lock
/// timeout in CI).
public func cpuBound<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
    try await withTaskExecutorPreference(LowPriorityExecutor.shared, operation: body)
}

/// Long loops inside ``cpuBound(_:)`` call this on every iteration, so that CPU-bound
/// bodies running at once share its threads instead of one waiting for another to end.
@inlinable
public func yieldPeriodically(every period: Int = 1_000, iteration: Int) async {
    if iteration % period == 0 { await Task.yield() }
}

/// One thread per core at nice 19, taking jobs from one queue (the runtime never enqueues
/// two jobs of one task at once, so a task still runs one step at a time). The threads
/// live as long as the test process.
final class LowPriorityExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = LowPriorityExecutor(threads: max(1, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = "cpu-bound-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        // Linux nice is per thread, and 0 names the calling one: this thread only.
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
