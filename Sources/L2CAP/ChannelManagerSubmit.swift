// A non-waiting send for callers that must keep PDU order from synchronous code (the ATT
// bearer's `send` is synchronous): the frame is queued before `submit` returns, so two
// submits on one connection leave in call order, which separate `Task { await send }`
// calls could not promise.
extension ChannelManager {
    /// Queues one SDU on `channel` and returns at once; `completion`, if given, learns
    /// when its last fragment is in the controller or why it never will be.
    public func submit(
        _ payload: [UInt8], cid channel: ChannelIdentifier, connection handle: UInt16,
        completion: (@Sendable (Result<Void, L2CAPError>) -> Void)? = nil
    ) {
        enqueue(BasicFrame(channelID: channel, payload: payload), handle: handle, completion: completion)
    }
}
