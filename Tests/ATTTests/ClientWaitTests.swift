@testable import ATT
import BluetoothCore
import TestSupport
import Testing

/// The client's callers on the one pending-answer primitive: a cancelled caller returns at
/// once, and an answered request leaves no deadline armed behind it.
@Suite struct ClientWaitTests {
    @Test func aCancelledCallerReturnsAtOnceWhateverItsRequestsDeadline() async throws {
        let (client, bearer) = makeClient([step("0A 01 00", "0B 01", held: true)], timeout: .seconds(60))
        let watcher = CountWatcher(client.observeQueue)
        let inFlight = Task { await attError { () async throws(ATTError) in try await client.read(1) } }
        try await withDeadline("the request on the wire") { await bearer.waitForSent(1) }
        let queued = Task { await attError { () async throws(ATTError) in try await client.read(2) } }
        try await withDeadline("queued") { await watcher.wait(for: 1) }
        let clock = ContinuousClock()
        let start = clock.now
        queued.cancel()
        inFlight.cancel()
        #expect(try await withDeadline("the cancelled queued request") { await queued.value } == .cancelled(request: .readRequest))
        #expect(try await withDeadline("the cancelled request on the wire") { await inFlight.value } == .cancelled(request: .readRequest))
        #expect(clock.now - start < .seconds(30), "a cancelled wait returns at once, not at its 60 s deadline")
        // The request on the wire keeps its deadline (its timeout would still kill the
        // bearer); the queued one never went out.
        #expect(client.state.withLock { $0.inFlight?.deadline } != nil)
        #expect(client.state.withLock { $0.answers.count } == 0)
        #expect(bearer.sent.count == 1)
    }

    @Test func answeredRequestsLeaveNoDeadlineArmed() async throws {
        let count = 1_000
        let (client, bearer) = makeClient(Array(repeating: step("0A 03 00", "0B 03"), count: count))
        for _ in 0..<count { _ = try await client.read(3) }
        // Each request armed a 30 s deadline; every one was cancelled by its response. (The
        // shared timer may hold other tests' deadlines, never 1,000 of these.)
        #expect(DeadlineTimer.shared.armedCount < 600, "the shared timer also holds what the tests beside this one armed (118 at once seen in CI)")
        #expect(client.state.withLock { $0.answers.count } == 0)
        #expect(bearer.failures.isEmpty)
    }
}
