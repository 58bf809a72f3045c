/// Waits for a condition that the code under test makes true from another thread. The
/// deadline only catches hangs: generous, because the full suite loads both cores.
public func waitUntil(_ condition: @Sendable () -> Bool, timeout: Duration = .seconds(60)) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        guard clock.now < deadline else { throw WaitTimeout() }
        await Task.yield()
        try await Task.sleep(for: .milliseconds(1))
    }
}

public struct WaitTimeout: Error {}
