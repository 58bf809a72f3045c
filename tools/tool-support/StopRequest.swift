import BluetoothCore
import Dispatch
import Glibc

/// "Stop now": Ctrl-C (SIGINT), SIGTERM, the end of `--duration`, or stdout's reader gone
/// (`| head`). The signals are taken over from their default handlers so a subcommand can
/// put the controller back (stop scanning or advertising, disconnect) before it exits.
public final class StopRequest {
    private let sources: [any DispatchSourceSignal]
    private let timer: Task<Void, Never>?
    private let id: UInt64

    /// The actions of the requests in force, for ``outputClosed()``.
    private static let active = Lock<(next: UInt64, actions: [UInt64: @Sendable () -> Void])>((1, [:]))

    /// Calls `action` on the first signal, when stdout's reader goes away and when
    /// `seconds` have passed (it may be called more than once; make it idempotent).
    public init(after seconds: Double?, _ action: @escaping @Sendable () -> Void) {
        id = Self.active.withLock { active in
            defer { active.next += 1 }
            active.actions[active.next] = action
            return active.next
        }
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
        _ = Self.active.withLock { $0.actions.removeValue(forKey: id) }
        timer?.cancel()
        for source in sources { source.cancel() }
    }

    /// Stdout's reader went away (the write failed with EPIPE: SIGPIPE is ignored, see
    /// ``runTool(_:arguments:)``): a command that is running until stopped stops, as on
    /// Ctrl-C, so it puts the controller back first; any other ends as SIGPIPE would
    /// have ended it.
    static func outputClosed() {
        let actions = active.withLock { Array($0.actions.values) }
        guard !actions.isEmpty else {
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
            return
        }
        for action in actions { action() }
    }

    /// Returns on a signal, when stdout's reader goes away, or after `seconds`.
    public static func wait(upTo seconds: Double?) async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let request = StopRequest(after: seconds) { continuation.yield() }
        for await _ in stream { break }
        request.cancel()
    }
}
