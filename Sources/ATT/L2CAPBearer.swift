import BluetoothCore
import HCI
import L2CAP

/// The ATT bearer of one LE connection: the fixed channel 0x0004 through BareBLE's own
/// L2CAP (Core 5.4 Vol 3 Part F 3.2.11, Part A 2.1).
///
/// - The link's end reaches the client as ``ATTBearerError/disconnected(reason:)`` with the
///   HCI reason, so every pending request fails at once with it.
/// - After an Exchange MTU, L2CAP's receive maximum for ATT on this connection becomes the
///   agreed MTU: a longer PDU is a peer's error and is dropped before it is buffered.
/// - Closing a dead bearer (transaction timeout, protocol violation) asks for the link to
///   be dropped through `disconnect`, because on the fixed channel no further PDU may be
///   sent (Vol 3 Part F 3.3.3) and only a new connection brings a new bearer. The hook is
///   a closure so the connection layer (HCI's `Connection.disconnect(reason:)`) plugs in
///   without ATT depending on it.
public final class L2CAPBearer: ATTBearer {
    /// Drops the link with the given reason.
    public typealias DisconnectHook = @Sendable (HCIErrorCode) async -> Void

    public let manager: ChannelManager
    public let connectionHandle: UInt16
    private let disconnect: DisconnectHook?
    private let lifecycle: BearerLifecycle
    private let currentMTU = Lock(ATTConstants.minimumLEMTU)
    /// The ATT channel on this link once started: sends and the close act on this link
    /// only, never on the next one the controller gives the handle.
    private let channel = Lock<ChannelRegistration?>(nil)
    /// What a queued PDU that later fails does (ends the bearer with L2CAP's reason), made
    /// once so that a send (a server's notification is the hot path) allocates no closure
    /// of its own. A plain constant: a closure kept in a generic `Lock` is wrapped in a new
    /// reabstraction thunk by every `withLock { $0 }`, a chain that grew by one per send and
    /// overflowed the stack when released after 300,000 sends.
    private let completion: @Sendable (Result<Void, L2CAPError>) -> Void

    /// - Parameter disconnect: called once when the host closes the bearer because it is
    ///   dead; nil leaves the link to the caller.
    public init(manager: ChannelManager, connection handle: UInt16, disconnect: DisconnectHook? = nil) {
        self.manager = manager
        self.connectionHandle = handle
        self.disconnect = disconnect
        let lifecycle = BearerLifecycle()
        self.lifecycle = lifecycle
        completion = { result in
            guard case .failure(let error) = result else { return }
            lifecycle.end(Self.reason(error))
        }
    }

    public func start(
        receive: @escaping @Sendable ([UInt8]) -> Void,
        oversized: @escaping @Sendable (ATTOpcode?, Int) -> Void,
        closed: @escaping @Sendable (ATTBearerError) -> Void
    ) {
        guard lifecycle.start(closed: closed) else { return }
        do {
            let registered = try manager.setHandler({ [weak self] event in
                switch event {
                case .received(let pdu):
                    receive(pdu)
                case let .oversized(length, prefix):
                    oversized(prefix.first.map(ATTOpcode.init(rawValue:)), length)
                case .disconnected(let reason):
                    self?.ended(.disconnected(reason: reason.rawValue))
                }
            }, channel: .attributeProtocol, connection: connectionHandle)
            channel.withLock { $0 = registered }
            // Closed while registering: close() found nothing to remove.
            if lifecycle.reason != nil { manager.removeHandler(registered) }
        } catch {
            // The link ended before the bearer started: the client learns it at once.
            ended(.failed("\(error)"))
        }
    }

    /// Responses and confirmations answer the peer, so when the controller stops taking
    /// data L2CAP drops them at its answer bound (the peer's own timer notices) instead of
    /// queueing one per PDU the peer sends. The host's own PDU meeting L2CAP's bound (the
    /// controller has kept hundreds without returning a credit) ends the bearer, and the
    /// send throws, with L2CAP's reason; ``sendUnlessFull(_:)`` returns false instead.
    public func send(_ pdu: [UInt8]) throws(ATTBearerError) {
        _ = try submit(pdu, refuseWhenFull: false)
    }

    /// The host's PDU at L2CAP's bound comes back as false and the bearer stays up.
    public func sendUnlessFull(_ pdu: [UInt8]) throws(ATTBearerError) -> Bool {
        try submit(pdu, refuseWhenFull: true)
    }

    private func submit(_ pdu: [UInt8], refuseWhenFull: Bool) throws(ATTBearerError) -> Bool {
        if let reason = lifecycle.reason { throw reason }
        let kind = pdu.first.flatMap { ATTOpcode(rawValue: $0).kind }
        let origin: OutgoingOrigin = kind == .response || kind == .confirmation ? .answer : .host
        do {
            if let channel = channel.withLock({ $0 }) {
                try manager.submit(pdu, on: channel, origin: origin, completion: completion)
            } else {
                try manager.submit(pdu, cid: .attributeProtocol, connection: connectionHandle, origin: origin, completion: completion)
            }
            return true
        } catch {
            if refuseWhenFull, case .outgoingQueueFull = error { return false }
            let reason = Self.reason(error)
            ended(reason)
            throw reason
        }
    }

    private static func reason(_ error: L2CAPError) -> ATTBearerError {
        switch error {
        case .disconnected(let reason): .disconnected(reason: reason.rawValue)
        default: .failed("\(error)")
        }
    }

    /// Waits for L2CAP's queue of this connection (the link's end also ends the wait).
    public func waitUntilSent() async {
        await manager.waitUntilSent(connection: connectionHandle)
    }

    public var mtu: UInt16 { currentMTU.withLock { $0 } }
    public var mtuIsNegotiatedBelow: Bool { false }
    /// L2CAP queues, and writes to the controller only with a credit in hand.
    public var sendNeverWaits: Bool { true }

    public func mtuExchanged(_ mtu: UInt16) {
        currentMTU.withLock { $0 = mtu }
        // Fails only when the link is already gone, which the client learns separately.
        try? manager.setMaximumReceivePayload(Int(mtu), channel: .attributeProtocol, connection: connectionHandle)
    }

    public func close(reason: ATTBearerError) {
        guard lifecycle.close(reason) else { return }
        if let channel = channel.withLock({ $0 }) { manager.removeHandler(channel) }
        switch reason {
        case .transactionTimedOut, .protocolViolation:
            // Remote User Terminated Connection is the reason a host gives for ending a
            // link itself (Core 5.4 Vol 4 Part E 7.1.6).
            if let disconnect { Task { await disconnect(.remoteUserTerminatedConnection) } }
        case .disconnected, .failed, .closedByHost:
            break
        }
    }

    /// The layer below ended the bearer: tell the client once.
    private func ended(_ reason: ATTBearerError) { lifecycle.end(reason) }
}
