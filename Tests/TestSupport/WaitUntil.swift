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

/// The deadline for a procedure a test starts but is not about (an ATT transaction, a
/// signaling request, an HCI procedure): far past any wait the test itself makes, so a
/// machine slowed by a sanitizer and hundreds of parallel tests cannot end the procedure
/// before the test answers it. Tests about a deadline pass their own.
public let unhurried: Duration = .seconds(600)
