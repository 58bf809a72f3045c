import BluetoothCore

// A non-waiting send for callers that must keep PDU order from synchronous code (the ATT
// bearer's `send` is synchronous): the frame is queued before `submit` returns, so two
// submits on one connection leave in call order, which separate `Task { await send }`
// calls could not promise.
extension ChannelManager {
    /// Queues one SDU on `channel` and returns at once; `completion`, if given, learns
    /// when its last fragment is in the controller or why it never will be. Throws, and
    /// never calls `completion`, when the PDU cannot be queued at all: an unknown
    /// connection, or the host's own PDU at the connection's ``OutgoingLimit``
    /// (``L2CAPError/outgoingQueueFull(queuedPDUs:queuedBytes:)``), so a caller can hold
    /// back at once. An answer to the peer (`origin` `.answer`) at its bound is dropped and
    /// counted instead; its completion is never called.
    public func submit(
        _ payload: [UInt8], cid channel: ChannelIdentifier, connection handle: UInt16, origin: OutgoingOrigin = .host,
        completion: (@Sendable (Result<Void, L2CAPError>) -> Void)? = nil
    ) throws(L2CAPError) {
        let outcome = enqueueAndSend(BasicFrame(channelID: channel, payload: payload), origin: origin, handle: handle, completion: completion)
        if case let .refused(error) = outcome { throw error }
    }

    /// ``submit(_:cid:connection:origin:completion:)`` on the channel and connection of
    /// `registration` only (see ``send(_:on:)``).
    public func submit(
        _ payload: [UInt8], on registration: ChannelRegistration, origin: OutgoingOrigin = .host,
        completion: (@Sendable (Result<Void, L2CAPError>) -> Void)? = nil
    ) throws(L2CAPError) {
        let outcome = enqueueAndSend(
            BasicFrame(channelID: registration.channel, payload: payload), origin: origin, handle: registration.handle,
            serial: registration.serial, completion: completion)
        if case let .refused(error) = outcome { throw error }
    }
}

extension ChannelManager {
    /// Returns once every PDU queued so far on `handle` is in the controller, or failed
    /// because the link ended. A Write Command (ATT's `send` only queues) can then be
    /// followed by a Disconnect without the Disconnect overtaking it. Returns at once when
    /// nothing is queued or the connection is unknown. With a `timeout`, returns after it at
    /// the latest (false: something was still queued): a peer whose controller never
    /// returns credits must not hold a caller that goes on anyway (a Disconnect); without
    /// one it waits for the queue or the link's end, like ``send(_:cid:connection:)``.
    @discardableResult
    public func waitUntilSent(connection handle: UInt16, timeout: Duration? = nil) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiting = Lock<CheckedContinuation<Bool, Never>?>(continuation)
            let timer = Lock<DeadlineTimer.Token?>(nil)
            let queued: Bool = state.withLock { state in
                state.connections[handle]?.outgoing.chainToLast { _ in
                    timer.withLock { $0 }.map { DeadlineTimer.shared.cancel($0) }
                    waiting.withLock { $0.take() }?.resume(returning: true)
                } ?? false
            }
            guard queued else { return continuation.resume(returning: true) }
            if let timeout {
                let token = DeadlineTimer.shared.schedule(after: timeout) { waiting.withLock { $0.take() }?.resume(returning: false) }
                timer.withLock { $0 = token }
                // Sent meanwhile: the chain's callback found no timer to cancel.
                if waiting.withLock({ $0 == nil }) { DeadlineTimer.shared.cancel(token) }
            }
        }
    }
}
