import BluetoothCore

/// One LE connection, from its LE (Enhanced) Connection Complete to its Disconnection
/// Complete. Made by ``Connector``; its properties follow the controller's events.
///
/// Every operation sends its command and then waits, with a deadline, for the event that
/// ends the procedure. When the connection ends (either side, supervision timeout, a
/// controller reset) every operation still waiting fails at once with
/// ``ConnectionError/disconnected(reason:)``, and later ones fail before sending anything.
///
/// Two operations of the same kind at once (two parameter updates) both end with the next
/// event of that kind: HCI does not say which command an LE Connection Update Complete
/// answers. L2CAP's answer to a peripheral's parameter request also ends a pending
/// ``updateParameters(_:timeout:)``.
public final class Connection: Sendable, CustomStringConvertible {
    public let controller: HCIController
    /// Connection_Handle (12 bits); reused by the controller after the connection ends.
    public let handle: UInt16
    public let role: ConnectionRole
    /// The peer's address as the controller reported it (an identity address when the
    /// controller resolved a private one).
    public let peer: DeviceAddress

    /// The procedures whose ending event an operation waits for.
    package enum Procedure: Hashable, Sendable {
        case connectionUpdate, remoteFeatures, dataLength, phyUpdate, disconnection, encryption
    }

    package enum LinkEvent: Sendable {
        case timing(ConnectionTiming)
        case features(LEFeatures)
        case dataLength(DataLength)
        case phy(ConnectionPHY)
        case disconnected(HCIErrorCode)
        case encrypted(keySize: Int?)
    }

    struct State: Sendable {
        var timing: ConnectionTiming
        var phy: ConnectionPHY = .le1M
        var dataLength: DataLength = .initial
        var remoteFeatures: LEFeatures?
        /// Why the connection is gone, once it is.
        var ending: ConnectionError?
        var expectations = PendingAnswers<Procedure, LinkEvent, ConnectionError>()
        var encryption = LinkEncryption()
        var encryptionHandler: EncryptionHandler?
        var longTermKeyProvider: LongTermKeyProvider?
    }

    let state: Lock<State>
    /// The Connector that routes this connection's events to it, kept alive by the
    /// connection: a program may hold only the connection, and it must still hear of its
    /// encryption and its end. (The Connector drops the connection when it ends.)
    let events: Connector

    init(controller: HCIController, events: Connector, handle: UInt16, role: ConnectionRole, peer: DeviceAddress, timing: ConnectionTiming) {
        self.controller = controller
        self.events = events
        self.handle = handle
        self.role = role
        self.peer = peer
        state = Lock(State(timing: timing))
    }

    /// The timing in effect, kept current from LE Connection Update Complete.
    public var timing: ConnectionTiming { state.withLock { $0.timing } }
    public var phy: ConnectionPHY { state.withLock { $0.phy } }
    public var dataLength: DataLength { state.withLock { $0.dataLength } }
    /// The peer's LE features, once ``readRemoteFeatures(timeout:)`` has read them.
    public var remoteFeatures: LEFeatures? { state.withLock { $0.remoteFeatures } }
    public var isConnected: Bool { state.withLock { $0.ending == nil } }
    /// The Disconnection Complete reason once the connection has ended (Hardware Failure
    /// after a controller reset); nil while connected or when the transport closed.
    public var disconnectReason: HCIErrorCode? {
        state.withLock { state in
            if case let .disconnected(reason)? = state.ending { return reason }
            return nil
        }
    }

    public var description: String {
        "connection 0x\(Hex.string([UInt8(handle >> 8), UInt8(handle & 0xFF)])) to \(peer) as \(role)"
    }

    // MARK: Operations

    /// Ends the connection (Disconnect) and waits for Disconnection Complete. Returns at
    /// once when the connection has already ended. The default deadline is the supervision
    /// timeout plus 2 s: a peer that does not acknowledge the termination is dropped by
    /// then. `reason` is what the peer is told.
    public func disconnect(reason: HCIErrorCode = .remoteUserTerminatedConnection, timeout: Duration? = nil) async throws(ConnectionError) {
        if !isConnected { return }
        let timeout = timeout ?? .milliseconds(timing.supervisionTimeoutMilliseconds) + .seconds(2)
        do {
            // Disconnecting is how callers clean up, often from a cancelled task: the command
            // goes out regardless (waiting for its completion still ends on cancellation).
            _ = try await perform(
                Disconnect(connectionHandle: handle, reason: reason), expecting: .disconnection, name: "Disconnect",
                timeout: timeout, cancellableSend: false)
        } catch .disconnected {
            // It ended some other way meanwhile: what the caller wanted.
        }
    }

    /// Waits for the connection to end and returns the Disconnection Complete reason. No
    /// deadline: this observes the connection instead of asking the controller for
    /// something; bound it by cancelling the task (then ``ConnectionError/procedureCancelled(_:)``).
    public func disconnection() async throws(ConnectionError) -> HCIErrorCode {
        let id = try expect(.disconnection, allowEnded: true)
        switch await wait(for: id, until: nil) {
        case let .value(.disconnected(reason)): return reason
        case let .failed(error): throw error
        case .cancelled, .expired, .value: throw .procedureCancelled("the end of \(self)")
        }
    }

    /// Asks for new connection timing (LE Connection Update) and returns what the
    /// controller settled on (LE Connection Update Complete).
    @discardableResult
    public func updateParameters(_ parameters: LEConnectionParameters, timeout: Duration = .seconds(10)) async throws(ConnectionError) -> ConnectionTiming {
        try parameters.validateForConnection()
        let event = try await perform(
            LEConnectionUpdate(connectionHandle: handle, connectionParameters: parameters),
            expecting: .connectionUpdate, name: "LE Connection Update", timeout: timeout)
        guard case let .timing(timing) = event else { return self.timing }
        return timing
    }

    /// Registers for the next LE Connection Update Complete, before whatever makes the peer
    /// start one (a peripheral's L2CAP Connection Parameter Update Request: the central
    /// answers and updates at once, and an event that came before the wait would be lost).
    /// Pass the id to ``waitForConnectionUpdate(_:timeout:)``, or to
    /// ``forgetConnectionUpdate(_:)`` when the request failed.
    package func expectConnectionUpdate() throws(ConnectionError) -> UInt64 {
        try expect(.connectionUpdate, allowEnded: false)
    }

    /// The timing the update registered as `id` settled on; ``ConnectionError/procedureTimedOut(_:after:)``
    /// when none came within `timeout`.
    package func waitForConnectionUpdate(_ id: UInt64, timeout: Duration) async throws(ConnectionError) -> ConnectionTiming {
        switch await wait(for: id, until: ContinuousClock.now + timeout) {
        case let .value(.timing(timing)): return timing
        case .value: return self.timing
        case let .failed(error): throw error
        case .expired: throw .procedureTimedOut("the central's LE Connection Update", after: timeout)
        case .cancelled: throw .procedureCancelled("the central's LE Connection Update")
        }
    }

    package func forgetConnectionUpdate(_ id: UInt64) {
        state.withLock { $0.expectations.forget(id) }
    }

    /// Reads the peer's LE features (LE Read Remote Features, then LE Read Remote Features
    /// Complete); also kept in ``remoteFeatures``.
    @discardableResult
    public func readRemoteFeatures(timeout: Duration = .seconds(10)) async throws(ConnectionError) -> LEFeatures {
        try requireCommand(LEReadRemoteFeatures.self)
        let event = try await perform(LEReadRemoteFeatures(connectionHandle: handle), expecting: .remoteFeatures, name: "LE Read Remote Features", timeout: timeout)
        guard case let .features(features) = event else { return remoteFeatures ?? [] }
        return features
    }

    /// Asks the link layer for `txOctets` (27 ... 251) payload octets per packet (LE Set
    /// Data Length) and returns the lengths in effect after LE Data Length Change. The
    /// controller reports only a *change*: when none comes within `timeout` (the peer kept
    /// the old values, or they were already in effect), the unchanged values are returned.
    @discardableResult
    public func requestDataLength(txOctets: UInt16, txTime: UInt16? = nil, timeout: Duration = .seconds(2)) async throws(ConnectionError) -> DataLength {
        try requireCommand(LESetDataLength.self)
        try requireFeature(.leDataPacketLengthExtension, "LE Data Packet Length Extension")
        guard (27...251).contains(txOctets) else {
            throw .invalidParameters("data length \(txOctets) octets is outside 27 ... 251")
        }
        let command = LESetDataLength(connectionHandle: handle, txOctets: txOctets, txTime: txTime ?? DataLength.transmitTime(octets: txOctets))
        do {
            let event = try await perform(command, expecting: .dataLength, name: "LE Set Data Length", timeout: timeout)
            if case let .dataLength(length) = event { return length }
        } catch .procedureTimedOut {
            // No change reported: what was in effect still is.
        }
        return dataLength
    }

    /// Asks to use these PHYs (LE Set PHY) and returns those in effect after LE PHY Update
    /// Complete. Asking for LE 2M or LE Coded needs the controller's feature.
    @discardableResult
    public func requestPHY(tx: LEPHYMask, rx: LEPHYMask, options: LECodedPHYOptions = .noPreference, timeout: Duration = .seconds(10)) async throws(ConnectionError) -> ConnectionPHY {
        try requireCommand(LESetPHY.self)
        let asked = tx.union(rx)
        if asked.contains(.le2M) { try requireFeature(.le2MPHY, "LE 2M PHY") }
        if asked.contains(.leCoded) { try requireFeature(.leCodedPHY, "LE Coded PHY") }
        guard !tx.isEmpty, !rx.isEmpty else { throw .invalidParameters("name at least one PHY for each direction") }
        let event = try await perform(
            LESetPHY(connectionHandle: handle, txPHYs: tx, rxPHYs: rx, phyOptions: options),
            expecting: .phyUpdate, name: "LE Set PHY", timeout: timeout)
        guard case let .phy(phy) = event else { return self.phy }
        return phy
    }

    // MARK: Sending and waiting

    /// Registers for the procedure's ending event, sends `command`, then waits for it.
    func perform<Command: HCICommand>(
        _ command: Command, expecting procedure: Procedure, name: String, timeout: Duration, cancellableSend: Bool = true
    ) async throws(ConnectionError) -> LinkEvent {
        let deadline = ContinuousClock.now + timeout
        let id = try expect(procedure, allowEnded: false)
        do {
            _ = try await controller.send(command, cancellable: cancellableSend)
        } catch .commandCancelled {
            state.withLock { $0.expectations.forget(id) }
            throw .procedureCancelled(name)
        } catch {
            // A link that dropped while the command was in flight is refused with 0x02;
            // the reason it dropped is the more useful answer.
            let ending: ConnectionError? = state.withLock { state in
                state.expectations.forget(id)
                return state.ending
            }
            throw ending ?? .controller(error)
        }
        switch await wait(for: id, until: deadline) {
        case let .value(event): return event
        case let .failed(error): throw error
        case .expired: throw .procedureTimedOut(name, after: timeout)
        case .cancelled: throw .procedureCancelled(name)
        }
    }

    private func expect(_ procedure: Procedure, allowEnded: Bool) throws(ConnectionError) -> UInt64 {
        let result: Result<UInt64, ConnectionError> = state.withLock { state in
            if let ending = state.ending {
                guard allowEnded, case .disconnected = ending else { return .failure(ending) }
            }
            let id = state.expectations.expect(procedure)
            if case let .disconnected(reason)? = state.ending {
                _ = state.expectations.fulfill(.disconnection, with: .value(.disconnected(reason)))
            }
            return .success(id)
        }
        return try result.get()
    }

    private func requireCommand<Command: HCICommand>(_ command: Command.Type) throws(ConnectionError) {
        guard let info = controller.info else { throw .controllerNotReady }
        guard info.supports(command) else { throw .unsupported(command.name) }
    }

    private func requireFeature(_ feature: LEFeatures, _ name: String) throws(ConnectionError) {
        guard let info = controller.info else { throw .controllerNotReady }
        guard info.leFeatures.contains(feature) else { throw .unsupported(name) }
    }
}

extension Connection: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<Procedure, LinkEvent, ConnectionError>) -> Result) -> Result {
        state.withLock { body(&$0.expectations) }
    }
}
