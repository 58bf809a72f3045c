/// The same values to every listener, each on a stream of its own that keeps the newest
/// `bufferLimit` for a reader that falls behind: how a type publishes its events to
/// whoever iterates. A stream leaves when its reader stops iterating.
public final class Listeners<Element: Sendable>: Sendable {
    private struct State: Sendable {
        var streams: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    public let bufferLimit: Int
    private let state = Lock(State())

    public init(bufferLimit: Int) { self.bufferLimit = bufferLimit }

    deinit { finish() }

    /// A stream of every value yielded from now on.
    public func stream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let id = state.withLock { state in
            state.nextID += 1
            state.streams[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams.removeValue(forKey: id) } }
        return stream
    }

    /// Hands `element` to every stream; returns how many dropped their oldest for it.
    @discardableResult
    public func yield(_ element: Element) -> Int {
        let streams = state.withLock { Array($0.streams.values) }
        var dropped = 0
        for stream in streams {
            if case .dropped = stream.yield(element) { dropped += 1 }
        }
        return dropped
    }

    /// Ends every stream; later ones still work.
    public func finish() {
        let streams = state.withLock { state in
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
