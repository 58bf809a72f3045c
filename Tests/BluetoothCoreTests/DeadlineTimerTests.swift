@testable import BluetoothCore
import Testing
import TestSupport

/// The process's deadline timer: actions run after their deadline, in deadline order;
/// cancelled ones never run and are forgotten at once.
@Suite struct DeadlineTimerTests {
    @Test func actionsRunAfterTheirDeadlinesInOrder() async throws {
        let order = Lock<[Int]>([])
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for (index, milliseconds) in [60, 20, 40].enumerated() {
                DeadlineTimer.shared.schedule(at: start + .milliseconds(milliseconds)) {
                    let count = order.withLock { $0.append(index); return $0.count }
                    if count == 3 { done.resume() }
                }
            }
        }
        #expect(order.withLock { $0 } == [1, 2, 0])
        #expect(ContinuousClock.now - start >= .milliseconds(60))
    }

    @Test func aCancelledDeadlineNeverRunsAndIsForgottenAtOnce() async throws {
        let ran = Lock(0)
        // A timer of its own, so the count is this test's alone (the shared one holds what
        // the tests beside it armed).
        let timer = DeadlineTimer()
        // One deadline for all, far enough that a loaded machine cancels them in time (at
        // 50 ms from each schedule, a starved test thread saw hundreds run first).
        let deadline = ContinuousClock.now + .seconds(1)
        var tokens: [DeadlineTimer.Token] = []
        for _ in 0..<10_000 {
            tokens.append(timer.schedule(at: deadline) { ran.withLock { $0 += 1 } })
        }
        for token in tokens { timer.cancel(token) }
        #expect(timer.armedCount == 0)
        // One that is not cancelled runs after them all, so theirs have passed too.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            timer.schedule(at: deadline + .milliseconds(30)) { done.resume() }
        }
        #expect(ran.withLock { $0 } == 0)
    }

    @Test(.timeLimit(.minutes(1))) func anEarlierDeadlineWakesTheTimerBeforeALaterOne() async throws {
        let far = DeadlineTimer.shared.schedule(after: .seconds(3600)) {}
        defer { DeadlineTimer.shared.cancel(far) }
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DeadlineTimer.shared.schedule(after: .milliseconds(10)) { done.resume() }
        }
        #expect(ContinuousClock.now - start < .seconds(3600))
    }
}
