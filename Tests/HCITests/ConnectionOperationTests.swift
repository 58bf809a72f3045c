import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// Operations on a live connection, as scripted conversations: the command with its exact
/// parameters, the event that ends it, and what happens when the link drops meanwhile.
@Suite struct ConnectionOperationTests {
    @Test func disconnectWaitsForDisconnectionComplete() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        let finished = Lock(false)
        let disconnecting = Task {
            try await connection.disconnect(timeout: .seconds(60))
            finished.withLock { $0 = true }
        }
        try await waitUntil { bench.sentOpcodes().last == Disconnect.opcode }
        #expect(bench.lastParameters(Disconnect.opcode) == [0x40, 0x00, 0x13])
        try await Task.sleep(for: .milliseconds(30))
        #expect(!finished.withLock { $0 })
        #expect(connection.isConnected)
        bench.inject(ConnectionBench.disconnection(reason: .connectionTerminatedByLocalHost))
        try await disconnecting.value
        #expect(connection.disconnectReason == .connectionTerminatedByLocalHost)
        #expect(try await connection.disconnection() == .connectionTerminatedByLocalHost)
        #expect(bench.connector.connections.isEmpty)
        // Disconnecting again is a no-op, not an error.
        try await connection.disconnect()
        #expect(bench.sentOpcodes().filter { $0 == Disconnect.opcode }.count == 1)
    }

    @Test func aDisconnectWithoutAnAnswerEndsAtItsDeadline() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        await #expect(throws: ConnectionError.procedureTimedOut("Disconnect", after: .milliseconds(50))) {
            try await connection.disconnect(timeout: .milliseconds(50))
        }
    }

    @Test func aRemoteDisconnectFailsEveryPendingOperationWithTheReason() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        let update = Task { try await connection.updateParameters(.init(connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 0, supervisionTimeout: 200), timeout: unhurried) }
        let features = Task { try await connection.readRemoteFeatures(timeout: unhurried) }
        let ended = Task { try await connection.disconnection() }
        try await waitUntil { bench.sentOpcodes().count == 3 }
        bench.inject(ConnectionBench.disconnection(reason: .remoteUserTerminatedConnection))
        let expected = ConnectionError.disconnected(reason: .remoteUserTerminatedConnection)
        await #expect(throws: expected) { try await update.value }
        await #expect(throws: expected) { try await features.value }
        #expect(try await ended.value == .remoteUserTerminatedConnection)
        // Later operations fail before anything is sent.
        await #expect(throws: expected) { try await connection.readRemoteFeatures() }
        #expect(bench.sentOpcodes().count == 3)
    }

    @Test func twoConnectionsAreIndependent() async throws {
        let bench = try await ConnectionBench.start()
        let first = try await bench.connected(handle: 0x0040)
        let second = try await bench.connected(handle: 0x0041, peer: ConnectionBench.otherPeer)
        let firstRead = Task { try await first.readRemoteFeatures(timeout: unhurried) }
        let secondRead = Task { try await second.readRemoteFeatures(timeout: unhurried) }
        try await waitUntil { bench.sentOpcodes().filter { $0 == LEReadRemoteFeatures.opcode }.count == 2 }
        bench.inject(ConnectionBench.disconnection(handle: 0x0040, reason: .connectionTimeout))
        await #expect(throws: ConnectionError.disconnected(reason: .connectionTimeout)) { try await firstRead.value }
        bench.inject(.le(.readRemoteFeaturesComplete(.init(status: .success, connectionHandle: 0x0041, leFeatures: 0x01))))
        #expect(try await secondRead.value == .leEncryption)
        #expect(second.isConnected)
        #expect(bench.connector.connections.map(\.handle) == [0x0041])
    }

    @Test func parameterUpdateConversation() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        bench.script(LEConnectionUpdate.opcode) { _ in
            [ConnectionBench.status(LEConnectionUpdate.opcode),
             ConnectionBench.event(.le(.connectionUpdateComplete(.init(status: .success, connectionHandle: 0x0040, connectionInterval: 12, peripheralLatency: 2, supervisionTimeout: 300))))]
        }
        let timing = try await connection.updateParameters(.init(connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 2, supervisionTimeout: 300))
        #expect(bench.lastParameters(LEConnectionUpdate.opcode) == [0x40, 0x00, 6, 0, 12, 0, 2, 0, 0x2C, 0x01, 0, 0, 0, 0])
        #expect(timing == ConnectionTiming(connectionInterval: 12, peripheralLatency: 2, supervisionTimeout: 300))
        #expect(connection.timing == timing)
    }

    @Test func aRefusedParameterUpdateCarriesTheStatus() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        bench.script(LEConnectionUpdate.opcode) { _ in
            [ConnectionBench.status(LEConnectionUpdate.opcode),
             ConnectionBench.event(.le(.connectionUpdateComplete(.init(status: .unsupportedRemoteFeature, connectionHandle: 0x0040, connectionInterval: 0, peripheralLatency: 0, supervisionTimeout: 0))))]
        }
        await #expect(throws: ConnectionError.controller(.commandFailed(LEConnectionUpdate.opcode, .unsupportedRemoteFeature))) {
            try await connection.updateParameters(ConnectionParameters.defaultTiming)
        }
        #expect(connection.timing == ConnectionBench.timing)
    }

    @Test func remoteFeaturesConversation() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        bench.script(LEReadRemoteFeatures.opcode) { _ in
            [ConnectionBench.status(LEReadRemoteFeatures.opcode),
             ConnectionBench.event(.le(.readRemoteFeaturesComplete(.init(status: .success, connectionHandle: 0x0040, leFeatures: 0x0121))))]
        }
        #expect(connection.remoteFeatures == nil)
        let features = try await connection.readRemoteFeatures()
        #expect(bench.lastParameters(LEReadRemoteFeatures.opcode) == [0x40, 0x00])
        #expect(features == [.leEncryption, .leDataPacketLengthExtension, .le2MPHY])
        #expect(connection.remoteFeatures == features)
    }

    @Test func aProcedureWithoutItsEventEndsAtItsDeadline() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        await #expect(throws: ConnectionError.procedureTimedOut("LE Read Remote Features", after: .milliseconds(50))) {
            try await connection.readRemoteFeatures(timeout: .milliseconds(50))
        }
        let reading = Task { try await connection.readRemoteFeatures(timeout: unhurried) }
        try await waitUntil { bench.sentOpcodes().filter { $0 == LEReadRemoteFeatures.opcode }.count == 2 }
        reading.cancel()
        await #expect(throws: ConnectionError.procedureCancelled("LE Read Remote Features")) { try await reading.value }
    }

    @Test func dataLengthConversation() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        let changed = DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)
        bench.script(LESetDataLength.opcode) { _ in
            [bench.chip.complete(LESetDataLength.opcode, [0x40, 0x00]),
             ConnectionBench.event(.le(.dataLengthChange(.init(connectionHandle: 0x0040, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120))))]
        }
        #expect(try await connection.requestDataLength(txOctets: 251) == changed)
        #expect(bench.lastParameters(LESetDataLength.opcode) == [0x40, 0x00, 0xFB, 0x00, 0x48, 0x08])
        #expect(connection.dataLength == changed)
        // No change reported: the values in effect come back after the deadline.
        bench.script(LESetDataLength.opcode, nil)
        #expect(try await connection.requestDataLength(txOctets: 251, timeout: .milliseconds(30)) == changed)
        await #expect(throws: ConnectionError.self) { try await connection.requestDataLength(txOctets: 300) }
    }

    @Test func phyConversationAndUnsupportedPHYs() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        bench.script(LESetPHY.opcode) { _ in
            [ConnectionBench.status(LESetPHY.opcode),
             ConnectionBench.event(.le(.phyUpdateComplete(.init(status: .success, connectionHandle: 0x0040, txPHY: .le2M, rxPHY: .le2M))))]
        }
        #expect(try await connection.requestPHY(tx: .le2M, rx: .le2M) == ConnectionPHY(tx: .le2M, rx: .le2M))
        #expect(bench.lastParameters(LESetPHY.opcode) == [0x40, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00])
        #expect(connection.phy.tx == .le2M)
        // This chip has no LE Coded PHY.
        await #expect(throws: ConnectionError.unsupported("LE Coded PHY")) { try await connection.requestPHY(tx: .leCoded, rx: .leCoded) }
    }

    @Test func connectOptionsAskForDataLengthAnd2M() async throws {
        let bench = try await ConnectionBench.start()
        bench.completeCreateWith(ConnectionBench.enhancedComplete())
        bench.script(LESetDataLength.opcode) { _ in
            [bench.chip.complete(LESetDataLength.opcode, [0x40, 0x00]),
             ConnectionBench.event(.le(.dataLengthChange(.init(connectionHandle: 0x0040, maxTxOctets: 200, maxTxTime: 1712, maxRxOctets: 27, maxRxTime: 328))))]
        }
        bench.script(LESetPHY.opcode) { _ in
            [ConnectionBench.status(LESetPHY.opcode),
             ConnectionBench.event(.le(.phyUpdateComplete(.init(status: .success, connectionHandle: 0x0040, txPHY: .le2M, rxPHY: .le2M))))]
        }
        let connection = try await bench.connector.connect(to: ConnectionBench.peer, options: .init(dataLength: 200, prefer2MPHY: true))
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode, LESetDataLength.opcode, LESetPHY.opcode])
        #expect(connection.dataLength.maxTxOctets == 200)
        #expect(connection.phy == ConnectionPHY(tx: .le2M, rx: .le2M))
    }

    @Test func aDisconnectRacingTheLinkDropSucceeds() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        // The link dropped just before our Disconnect: the controller says 0x02.
        bench.script(Disconnect.opcode) { _ in
            [ConnectionBench.event(ConnectionBench.disconnection(reason: .connectionTimeout)),
             ConnectionBench.status(Disconnect.opcode, .unknownConnectionIdentifier)]
        }
        try await connection.disconnect()
        #expect(connection.disconnectReason == .connectionTimeout)
    }

    /// A program may keep only the connection: the Connector that made it (and routes its
    /// events) lives on with it, so the end still reaches it.
    @Test func aConnectionHearsItsEndAfterItsConnectorIsReleased() async throws {
        let bench = try await ConnectionBench.start()
        bench.completeCreateWith(ConnectionBench.enhancedComplete(handle: 0x0041))
        var connector: Connector? = Connector(controller: bench.controller)
        weak let released = connector
        let connection = try await connector!.connect(to: ConnectionBench.peer, timeout: .seconds(5))
        connector = nil
        #expect(released != nil, "the live connection keeps its Connector")
        bench.inject(ConnectionBench.disconnection(handle: 0x0041, reason: .connectionTimeout))
        let reason = try await withDeadline("the end of the connection", seconds: 5) { try await connection.disconnection() }
        #expect(reason == .connectionTimeout)
    }
}
