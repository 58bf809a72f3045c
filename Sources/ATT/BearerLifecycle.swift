import BluetoothCore

/// The bookkeeping every ATT bearer shares: `start` takes effect once, the first reason
/// the bearer stopped is kept, and the client's `closed` callback runs at most once, and
/// only when the layer below ended the bearer (a host that closes it already knows).
/// `package`: the kernel host's socket bearer (module KernelHost) keeps the same books.
package final class BearerLifecycle: Sendable {
    private struct State {
        var started = false
        var closed: (@Sendable (ATTBearerError) -> Void)?
        var reason: ATTBearerError?
    }

    private let state = Lock(State())

    package init() {}

    /// Records `closed`; true the first time only.
    package func start(closed: @escaping @Sendable (ATTBearerError) -> Void) -> Bool {
        state.withLock { state in
            defer { state.started = true }
            state.closed = closed
            return !state.started
        }
    }

    /// Why the bearer stopped, or nil while it works.
    package var reason: ATTBearerError? { state.withLock { $0.reason } }

    /// The host closes the bearer; true when this is the first stop.
    package func close(_ reason: ATTBearerError) -> Bool {
        state.withLock { state in
            guard state.reason == nil else { return false }
            state.reason = reason
            state.closed = nil
            return true
        }
    }

    /// The layer below ended the bearer: the client hears it once.
    package func end(_ reason: ATTBearerError) {
        let closed: (@Sendable (ATTBearerError) -> Void)? = state.withLock { state in
            guard state.reason == nil else { return nil }
            state.reason = reason
            defer { state.closed = nil }
            return state.closed
        }
        closed?(reason)
    }
}
