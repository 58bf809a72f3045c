import BluetoothCore
import Dispatch
import HCITransport

/// An in-memory transport for driver tests. Packets the host sends are recorded and handed
/// to `responder`; whatever it returns is delivered back on a serial queue, as a real
/// transport's reader thread would (never re-entrantly inside `send`).
public final class ScriptedTransport: HCITransport {
    public let name = "scripted"
    private let queue = DispatchQueue(label: "scripted-transport")
    private let state = Lock<State>(State())

    struct State {
        var receive: (@Sendable (HCIPacket) -> Void)?
        var closed: (@Sendable (TransportError?) -> Void)?
        var sent: [HCIPacket] = []
        var responder: @Sendable (HCIPacket) -> [HCIPacket] = { _ in [] }
        var isClosed = false
    }

    public init(responder: @escaping @Sendable (HCIPacket) -> [HCIPacket] = { _ in [] }) {
        _ = TestLogging.quiet
        state.withLock { $0.responder = responder }
        queue.setSpecific(key: Self.deliveryKey, value: true)
    }

    private static let deliveryKey = DispatchSpecificKey<Bool>()
    /// Whether the caller runs where a scripted transport delivers packets to the host: the
    /// stand-in for a real transport's reader thread.
    public static var onDeliveryThread: Bool { DispatchQueue.getSpecific(key: deliveryKey) == true }

    public func setResponder(_ responder: @escaping @Sendable (HCIPacket) -> [HCIPacket]) {
        state.withLock { $0.responder = responder }
    }

    public var sent: [HCIPacket] { state.withLock { $0.sent } }

    public func start(
        receive: @escaping @Sendable (HCIPacket) -> Void,
        closed: @escaping @Sendable (TransportError?) -> Void
    ) throws(TransportError) {
        state.withLock {
            $0.receive = receive
            $0.closed = closed
        }
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        let (responder, closed) = state.withLock { state in
            state.sent.append(packet)
            return (state.responder, state.isClosed)
        }
        if closed { throw TransportError.closedByPeer(spec: name) }
        let replies = responder(packet)
        if !replies.isEmpty { inject(replies) }
    }

    /// Delivers packets to the host as if the controller had sent them.
    public func inject(_ packets: [HCIPacket]) {
        queue.async { [self] in
            guard let receive = state.withLock({ $0.receive }) else { return }
            for packet in packets { receive(packet) }
        }
    }

    /// Waits until every injected packet so far has been delivered.
    public func drain() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    public func close() {
        let closed = state.withLock { state -> (@Sendable (TransportError?) -> Void)? in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            return state.closed
        }
        if let closed { queue.async { closed(nil) } }
    }
}
