import BluetoothCore

/// A value the server pushed: a notification or an indication (already confirmed, or
/// about to be, when a subscriber sees it).
public struct ATTHandleValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public var isIndication: Bool

    public init(handle: UInt16, value: [UInt8], isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}

extension ATTClient {
    /// How many values a stream holds for a slow reader before it drops the oldest: a
    /// peer decides how fast notifications come, so the buffer must not grow without bound.
    public static let defaultStreamBuffer = 256

    /// The values pushed for `handle` (every handle when nil), as they arrive. The stream
    /// ends when the bearer closes; when its reader stops, the subscription is removed.
    public func values(
        handle: UInt16? = nil,
        bufferingPolicy: AsyncStream<ATTHandleValue>.Continuation.BufferingPolicy = .bufferingNewest(ATTClient.defaultStreamBuffer)
    ) -> AsyncStream<ATTHandleValue> {
        let (stream, continuation) = AsyncStream.makeStream(of: ATTHandleValue.self, bufferingPolicy: bufferingPolicy)
        let subscription = addValueHandler(handle: handle, onClose: { continuation.finish() }) { [weak self] value in
            if case .dropped = continuation.yield(value) { self?.countDroppedValue() }
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// Counts a value a bounded stream dropped (``Statistics/valuesDroppedByStreams``), for
    /// the streams built over ``addValueHandler(handle:onClose:_:)`` here and one layer up.
    package func countDroppedValue() {
        let count = state.withLock { state in
            state.statistics.valuesDroppedByStreams += 1
            return state.statistics.valuesDroppedByStreams
        }
        logger.droppedForOverflow("value dropped: its stream's reader fell behind", counter: "valuesDroppedByStreams", count: count)
    }

    /// Calls `handler` synchronously, on the bearer's thread, with each value pushed for
    /// `handle` (every handle when nil), until the subscription is cancelled or released.
    /// For an indication it runs before the confirmation is sent. `onClose` runs once when
    /// the bearer closes (at once if it already has).
    public func addValueHandler(
        handle: UInt16? = nil,
        onClose: (@Sendable () -> Void)? = nil,
        _ handler: @escaping @Sendable (ATTHandleValue) -> Void
    ) -> ATTSubscription {
        guard let id = register(Subscriber(handle: handle, deliver: handler, finish: onClose)) else {
            onClose?()
            return ATTSubscription {}
        }
        return ATTSubscription { [weak self] in self?.unregister(id) }
    }

    /// Waits until the bearer closes (by either side) and returns why: at once when it
    /// already has; nil when the waiting task is cancelled first.
    public func closure() async -> ATTBearerError? {
        // 0x0000 is never a valid attribute handle (Core 5.4 Vol 3 Part F 3.2.2): this
        // stream carries no value, it only ends.
        for await _ in values(handle: 0x0000, bufferingPolicy: .bufferingNewest(1)) {}
        return closedReason
    }

    /// Live subscriptions (streams and handlers), to check none leak.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Nil when the bearer is already closed: nothing would ever be delivered.
    private func register(_ subscriber: Subscriber) -> UInt64? {
        state.withLock { state in
            guard state.closedReason == nil else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = subscriber
            return id
        }
    }

    private func unregister(_ id: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
}

/// A registration that ends when cancelled or released: `onCancel` runs once, on the
/// first ``cancel()`` or when the last reference goes.
public final class ATTSubscription: Sendable {
    private let onCancel: Lock<(@Sendable () -> Void)?>

    public init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Lock(onCancel)
    }

    public func cancel() {
        onCancel.withLock { action in
            defer { action = nil }
            return action
        }?()
    }

    deinit { cancel() }
}
