import BluetoothCore
import HCI
import Logging

/// L2CAP for every LE connection of one controller: reassembles incoming ACL data per
/// connection, serves the fixed channels (ATT, LE signaling, SMP), fragments outgoing
/// B-frames under the controller's ACL credits, and answers LE signaling.
///
/// All state sits behind one lock. Incoming data and events are handled synchronously on
/// the transport's reader thread, in arrival order; handlers are called outside the lock,
/// so they may call back into the manager.
public final class ChannelManager: Sendable {
    public typealias ChannelHandler = @Sendable (ChannelEvent) -> Void
    public typealias ConnectionHandler = @Sendable (ConnectionEvent) -> Void
    /// Decides a peripheral's connection parameter update request (we are central). Called
    /// on the reader thread with parameters already known to be valid; keep it short.
    public typealias ConnectionParameterUpdatePolicy = @Sendable (L2CAPConnection, ConnectionParameterUpdateRequest) -> Bool

    public struct Configuration: Sendable {
        /// The largest payload accepted per fixed channel; a PDU announcing more is
        /// dropped before anything is buffered. Channels absent here are not served.
        public var maximumReceivePayload: [ChannelIdentifier: Int]
        /// How long a signaling request of ours waits for its answer (Vol 3 Part A 6.2.1,
        /// RTX: 1 to 60 s; 30 s is the customary value).
        public var signalingTimeout: Duration
        public var connectionParameterUpdatePolicy: ConnectionParameterUpdatePolicy
        /// How much one connection may queue for the controller, and so how much a peer
        /// can make us hold while the controller returns no credits.
        public var outgoingLimit: OutgoingLimit

        /// ATT: 517 (the largest ATT_MTU, Vol 3 Part F 3.2.8); LE signaling: 23 (the LE
        /// MTUsig minimum, enough for every LE command); SMP: 65 (Pairing Public Key).
        public static let defaultMaximumReceivePayload: [ChannelIdentifier: Int] = [
            .attributeProtocol: 517, .leSignaling: 23, .securityManagerProtocol: 65,
        ]

        public init(
            maximumReceivePayload: [ChannelIdentifier: Int] = Configuration.defaultMaximumReceivePayload,
            signalingTimeout: Duration = .seconds(30),
            connectionParameterUpdatePolicy: @escaping ConnectionParameterUpdatePolicy = { _, _ in true },
            outgoingLimit: OutgoingLimit = OutgoingLimit()
        ) {
            self.outgoingLimit = outgoingLimit
            self.maximumReceivePayload = maximumReceivePayload
            self.signalingTimeout = signalingTimeout
            self.connectionParameterUpdatePolicy = connectionParameterUpdatePolicy
        }

        var signalingMTU: Int { maximumReceivePayload[.leSignaling] ?? 23 }
    }

    struct State: Sendable {
        var connections: [UInt16: ConnectionState] = [:]
        /// Handles with fragments waiting, in the order they will be served (round-robin).
        var readyOrder: [UInt16] = []
        var pumpRunning = false
        var nextID: UInt64 = 1
        var statistics = L2CAPStatistics()
        /// Callers waiting for the answers to our signaling requests, on every connection.
        var signalingAnswers = PendingAnswers<UInt16, Void, L2CAPError>()
        var connectionHandler: ConnectionHandler?

        mutating func makeID() -> UInt64 {
            defer { nextID += 1 }
            return nextID
        }

        /// One connection's state, changed in place. The per-PDU paths use this, not
        /// `connections[handle]?.…`: the key subscript's modify accessor holds an optional
        /// copy of the whole state in a coroutine frame too large for its inline buffer, so
        /// each such access cost two mallocs (about 14 per notification sent, measured with
        /// a uprobe on malloc); through an index the value is changed where it lies.
        mutating func withConnection<Result>(_ handle: UInt16, _ body: (inout ConnectionState) -> Result) -> Result? {
            guard let index = connections.index(forKey: handle) else { return nil }
            return body(&connections.values[index])
        }
    }

    public let controller: HCIController
    public let configuration: Configuration
    /// Where L2CAP logs (``ChannelManager/defaultLogLabel``).
    public let logger: Logger
    let state = Lock(State())

    /// The L2CAP layer's logger label.
    public static let defaultLogLabel = "bareble.l2cap"
    private let subscription = Lock<Subscription?>(nil)

    /// Attaches to `controller`: takes over its ACL handler (L2CAP is the only consumer of
    /// ACL data) and follows its connection events. Create it before connections exist.
    public init(
        controller: HCIController, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: ChannelManager.defaultLogLabel)
    ) {
        self.controller = controller
        self.configuration = configuration
        self.logger = logger
        controller.setACLHandler { [weak self] packet in self?.receive(packet) }
        let subscription = controller.subscribe { [weak self] event in self?.handle(event) }
        self.subscription.withLock { $0 = subscription }
    }

    /// Stops following the controller; pending work is left as it is.
    public func detach() {
        controller.setACLHandler(nil)
        subscription.withLock { $0 = nil }
    }

    public var statistics: L2CAPStatistics { state.withLock { $0.statistics } }
    public var connections: [L2CAPConnection] {
        state.withLock { $0.connections.values.map(\.info) }.sorted { $0.handle < $1.handle }
    }
    public func connection(_ handle: UInt16) -> L2CAPConnection? {
        state.withLock { $0.connections[handle]?.info }
    }

    // MARK: Registration

    /// Where connection lifecycle events go (one handler; nil removes it).
    public func setConnectionHandler(_ handler: ConnectionHandler?) {
        state.withLock { $0.connectionHandler = handler }
    }

    /// Sets (or with nil removes) the one receiver of `channel` on a connection. Only
    /// channels with a receive maximum are served; LE signaling is L2CAP's own. Returns
    /// what was registered: ``removeHandler(_:)``, ``send(_:on:)`` and
    /// ``submit(_:on:origin:completion:)`` with it act on this connection only, never on
    /// the next one the controller gives the same handle.
    @discardableResult
    public func setHandler(_ handler: ChannelHandler?, channel: ChannelIdentifier, connection handle: UInt16) throws(L2CAPError) -> ChannelRegistration {
        guard channel != .leSignaling, configuration.maximumReceivePayload[channel] != nil else {
            throw .unsupportedChannel(channel)
        }
        let found: (serial: UInt64, drain: Bool)? = state.withLock { state in
            guard let serial = state.connections[handle]?.serial else { return nil }
            state.connections[handle]?.handlers[channel] = handler.map(ChannelHandlerEntry.init)
            guard handler != nil, state.connections[handle]?.registered.insert(channel).inserted == true,
                  state.connections[handle]?.early[channel] != nil else { return (serial, false) }
            state.connections[handle]?.draining.insert(channel)
            return (serial, true)
        }
        guard let found else { throw .unknownConnection(handle: handle) }
        if found.drain, let handler { drainEarly(channel: channel, handle: handle, to: handler) }
        return ChannelRegistration(channel: channel, handle: handle, serial: found.serial)
    }

    /// Removes the receiver `registration` set, if its connection still has the handle: a
    /// link's late close must not take the channel from the next link given the handle.
    public func removeHandler(_ registration: ChannelRegistration) {
        state.withLock { state in
            guard state.connections[registration.handle]?.serial == registration.serial else { return }
            state.connections[registration.handle]?.handlers[registration.channel] = nil
        }
    }

    /// Hands the SDUs that came before the first handler to it, oldest first; SDUs that
    /// arrive meanwhile queue behind them, so the order on the air is kept.
    private func drainEarly(channel: ChannelIdentifier, handle: UInt16, to handler: ChannelHandler) {
        while true {
            let batch: [[UInt8]] = state.withLock { state in
                let batch = state.connections[handle]?.early.removeValue(forKey: channel) ?? []
                if batch.isEmpty { state.connections[handle]?.draining.remove(channel) }
                return batch
            }
            if batch.isEmpty { return }
            for sdu in batch { handler(.received(sdu)) }
        }
    }

    /// Changes the largest payload accepted on `channel` for one connection (e.g. ATT after
    /// an MTU exchange). Zero or less stops serving the channel.
    public func setMaximumReceivePayload(_ maximum: Int, channel: ChannelIdentifier, connection handle: UInt16) throws(L2CAPError) {
        let found: Bool = state.withLock { state in
            guard state.connections[handle] != nil else { return false }
            state.connections[handle]?.reassembler.maximumPayload[channel] = maximum > 0 ? maximum : nil
            return true
        }
        guard found else { throw .unknownConnection(handle: handle) }
    }

    // MARK: Events

    private func handle(_ event: HCIEvent) {
        switch event {
        case let .le(.connectionComplete(complete)) where complete.status == .success:
            connected(L2CAPConnection(
                handle: complete.connectionHandle, role: complete.role,
                peerAddressType: complete.peerAddressType, peerAddress: complete.peerAddress,
                connectionInterval: complete.connectionInterval, peripheralLatency: complete.peripheralLatency,
                supervisionTimeout: complete.supervisionTimeout
            ))
        case let .le(.enhancedConnectionComplete(complete)) where complete.status == .success:
            connected(L2CAPConnection(
                handle: complete.connectionHandle, role: complete.role,
                peerAddressType: complete.peerAddressType, peerAddress: complete.peerAddress,
                connectionInterval: complete.connectionInterval, peripheralLatency: complete.peripheralLatency,
                supervisionTimeout: complete.supervisionTimeout
            ))
        case let .le(.connectionUpdateComplete(update)) where update.status == .success:
            state.withLock { state in
                state.connections[update.connectionHandle]?.info.connectionInterval = update.connectionInterval
                state.connections[update.connectionHandle]?.info.peripheralLatency = update.peripheralLatency
                state.connections[update.connectionHandle]?.info.supervisionTimeout = update.supervisionTimeout
            }
        case let .disconnectionComplete(disconnection) where disconnection.status == .success:
            let teardown = state.withLock { Self.remove(disconnection.connectionHandle, reason: disconnection.reason, from: &$0) }
            teardown?.finish()
        case .hardwareError:
            // The driver resets the controller: every link is gone without a Disconnection
            // Complete, so end them here.
            let teardowns = state.withLock { state in
                state.connections.keys.sorted().compactMap { Self.remove($0, reason: .hardwareFailure, from: &state) }
            }
            for teardown in teardowns { teardown.finish() }
        default:
            break
        }
    }

    private func connected(_ connection: L2CAPConnection) {
        let (stale, handler) = state.withLock { state in
            // A second Connection Complete for a live handle means we missed its end.
            let stale = Self.remove(connection.handle, reason: .unspecifiedError, from: &state)
            state.connections[connection.handle] = ConnectionState(
                info: connection, serial: state.makeID(),
                maximumPayload: configuration.maximumReceivePayload
            )
            return (stale, state.connectionHandler)
        }
        stale?.finish()
        handler?(.connected(connection))
    }

    /// What a connection leaves behind to be failed and notified outside the lock.
    struct Teardown {
        let connection: L2CAPConnection
        let reason: HCIErrorCode
        let completions: [OutgoingPDU.Completion]
        let requests: [PendingAnswers<UInt16, Void, L2CAPError>.Resumption]
        let handlers: [ChannelHandler]
        let connectionHandler: ConnectionHandler?

        func finish() {
            let error = L2CAPError.disconnected(reason: reason)
            for completion in completions { completion(.failure(error)) }
            for request in requests { request.resume() }
            for handler in handlers { handler(.disconnected(reason: reason)) }
            connectionHandler?(.disconnected(connection, reason: reason))
        }
    }

    private static func remove(_ handle: UInt16, reason: HCIErrorCode, from state: inout State) -> Teardown? {
        guard let connection = state.connections.removeValue(forKey: handle) else { return nil }
        state.readyOrder.removeAll { $0 == handle }
        return Teardown(
            connection: connection.info,
            reason: reason,
            completions: connection.outgoing.completions,
            requests: connection.pendingRequests.values.sorted().compactMap {
                state.signalingAnswers.fulfill(id: $0, with: .failed(.disconnected(reason: reason)))
            },
            handlers: connection.handlers.keys.sorted { $0.rawValue < $1.rawValue }.compactMap { connection.handlers[$0]?.deliver },
            connectionHandler: state.connectionHandler
        )
    }

    // MARK: Receiving

    private func receive(_ packet: ACLDataPacket) {
        let handle = packet.connectionHandle
        var oversized: [(ChannelHandler, ChannelEvent)] = []
        // Counted under the lock, logged after it.
        var drops: [(drop: String, counter: String, count: Int)] = []
        var overflowDrops: Int?
        let delivery: (BasicFrame, ChannelHandlerEntry?)? = state.withLock { state in
            guard let (frame, dropped) = state.withConnection(handle, { $0.reassembler.receive(packet) }) else {
                state.statistics.unknownConnectionFragments += 1
                drops.append(("ACL data for no known connection", "unknownConnectionFragments", state.statistics.unknownConnectionFragments))
                return nil
            }
            for drop in dropped {
                let (counter, count) = state.statistics.count(drop)
                drops.append(("\(drop)", counter, count))
                guard case let .exceedsChannelMaximum(channel, length, _, prefix) = drop else { continue }
                if channel == .leSignaling {
                    rejectOversizedSignaling(prefix: prefix, handle: handle, state: &state)
                } else if let handler = state.connections[handle]?.handlers[channel]?.deliver {
                    oversized.append((handler, .oversized(length: length, prefix: prefix)))
                }
            }
            guard let frame else { return nil }
            if frame.channelID == .leSignaling { return (frame, nil) }
            guard let connection = state.connections[handle] else { return nil }
            if connection.draining.contains(frame.channelID) {
                if connection.early[frame.channelID, default: []].count < ConnectionState.maximumHandOverBacklog {
                    state.connections[handle]?.early[frame.channelID, default: []].append(frame.payload)
                } else {
                    state.statistics.handOverBacklogDrops += 1
                    overflowDrops = state.statistics.handOverBacklogDrops
                }
                return nil
            }
            guard let handler = connection.handlers[frame.channelID] else {
                state.statistics.unhandledChannelPDUs += 1
                if !connection.registered.contains(frame.channelID),
                   connection.early[frame.channelID, default: []].count < ConnectionState.maximumEarlySDUs {
                    state.connections[handle]?.early[frame.channelID, default: []].append(frame.payload)
                } else {
                    drops.append(("PDU for a channel nobody serves", "unhandledChannelPDUs", state.statistics.unhandledChannelPDUs))
                }
                return nil
            }
            return (frame, handler)
        }
        for drop in drops {
            logger.droppedInput("ACL data dropped", counter: drop.counter, count: drop.count, metadata: ["handle": .hex(handle), "drop": "\(drop.drop)"])
        }
        if let overflowDrops {
            logger.droppedForOverflow(
                "early PDU dropped: the channel's backlog is full", counter: "handOverBacklogDrops", count: overflowDrops,
                metadata: ["handle": .hex(handle)])
        }
        for (handler, event) in oversized { handler(event) }
        guard let (frame, handler) = delivery else { return }
        if let handler {
            handler.deliver(.received(frame.payload))
        } else {
            receiveSignaling(frame.payload, handle: handle)
        }
    }
}
