import ATT
import BluetoothCore

/// One call into an application handler, with a deadline: the first of the handler's
/// answer and the deadline resumes the store. Not a task group: a group waits for its
/// children on the way out, so a handler that never answers would still hold the request.
/// The handler runs in a task of its own and, when the deadline wins, is cancelled and its
/// late answer dropped (a late write may still have reached the application; the client
/// was told Unlikely Error).
enum GATTHandlerCall {
    /// The handler's result, or nil when the deadline passed first (a deadline already
    /// past calls nothing).
    static func run<Value: Sendable>(
        until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async throws(ATTErrorCode) -> Value
    ) async -> Result<Value, ATTErrorCode>? {
        guard deadline > .now else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ATTErrorCode>?, Never>) in
            let waiting = Lock<CheckedContinuation<Result<Value, ATTErrorCode>?, Never>?>(continuation)
            let work = Lock<Task<Void, Never>?>(nil)
            let timer = DeadlineTimer.shared.schedule(at: deadline) {
                waiting.withLock { $0.take() }?.resume(returning: nil)
                work.withLock { $0 }?.cancel()
            }
            let task = Task {
                let result: Result<Value, ATTErrorCode>
                do throws(ATTErrorCode) {
                    result = .success(try await body())
                } catch {
                    result = .failure(error)
                }
                DeadlineTimer.shared.cancel(timer)
                waiting.withLock { $0.take() }?.resume(returning: result)
            }
            work.withLock { $0 = task }
        }
    }
}
