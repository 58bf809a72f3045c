import Dispatch
import Glibc

/// "Stop now": Ctrl-C (SIGINT), SIGTERM, or the end of `--duration`. The signals are taken
/// over from their default handlers so a subcommand can put the controller back (stop
/// scanning or advertising, disconnect) before it exits.
public final class StopRequest {
    private let sources: [any DispatchSourceSignal]
    private let timer: Task<Void, Never>?

    /// Calls `action` on the first signal and when `seconds` have passed (it may be called
    /// more than once; make it idempotent).
    public init(after seconds: Double?, _ action: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            return source
        }
        timer = seconds.map { seconds in
            Task {
                do { try await Task.sleep(for: .milliseconds(Int64(seconds * 1000))) } catch { return }
                action()
            }
        }
    }

    public func cancel() {
        timer?.cancel()
        for source in sources { source.cancel() }
    }

    /// Returns on a signal or after `seconds`.
    public static func wait(upTo seconds: Double?) async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let request = StopRequest(after: seconds) { continuation.yield() }
        for await _ in stream { break }
        request.cancel()
    }
}
