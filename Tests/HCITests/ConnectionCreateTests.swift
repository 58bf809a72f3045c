import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// Creating connections: which command, its exact bytes, both completion events, the real
/// cancel (deadline and task cancellation, including the race), failures, the queue.
@Suite struct ConnectionCreateTests {
    let peerBytes: [UInt8] = [0x01, 0x00, 0x00, 0x4D, 0x4B, 0xC4]
    /// Interval 24...40, latency 0, timeout 400, CE lengths 0, little endian.
    let defaultTimingBytes: [UInt8] = [24, 0, 40, 0, 0, 0, 0x90, 0x01, 0, 0, 0, 0]

    @Test func extendedCreateConnectionWithExactParametersCompletedByLegacyEvent() async throws {
        let bench = try await ConnectionBench.start()
        bench.completeCreateWith(ConnectionBench.legacyComplete(handle: 0x0041))
        let connection = try await bench.connector.connect(to: ConnectionBench.peer)
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode])
        // Filter policy 0, own public, peer random, the address, PHYs 1M, then 1M's entry.
        #expect(bench.lastParameters(LEExtendedCreateConnection.opcode) == [0x00, 0x00, 0x01] + peerBytes + [0x01, 0x60, 0x00, 0x60, 0x00] + defaultTimingBytes)
        #expect(connection.handle == 0x0041)
        #expect(connection.role == .central)
        #expect(connection.peer == ConnectionBench.peer)
        #expect(connection.timing == ConnectionBench.timing)
        #expect(connection.timing.connectionIntervalMilliseconds == 50)
        #expect(connection.phy == .le1M)
        #expect(connection.dataLength == .initial)
        #expect(connection.isConnected)
        #expect(bench.connector.connections.map(\.handle) == [0x0041])
    }

    @Test func extendedCreateOn2MAndCodedOnlyWhenSupportedThenReadsThePHY() async throws {
        let bench = try await ConnectionBench.start(features: [.leEncryption, .le2MPHY, .leExtendedAdvertising])
        bench.completeCreateWith(ConnectionBench.enhancedComplete(v2: true))
        let parameters = ConnectionParameters(initiatingPHYs: [.le2M, .leCoded])
        let connection = try await bench.connector.connect(to: ConnectionBench.peer, parameters: parameters)
        let sent = try #require(bench.lastParameters(LEExtendedCreateConnection.opcode))
        // Coded is not supported by this chip: 1M and 2M, one 16-byte entry each.
        #expect(sent[9] == 0x03)
        #expect(sent.count == 10 + 2 * 16)
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode, LEReadPHY.opcode])
        #expect(connection.phy == ConnectionPHY(tx: .le2M, rx: .le2M))
    }

    @Test func legacyCreateConnectionCompletedByEnhancedV2FromARandomAddress() async throws {
        let bench = try await ConnectionBench.start(extended: false)
        bench.completeCreateWith(ConnectionBench.enhancedComplete(v2: true))
        let own = BluetoothAddress(0xD1_0000_0000_07)
        let connection = try await bench.connector.connect(to: ConnectionBench.peer, parameters: .init(ownAddress: .random(own)))
        #expect(bench.sentOpcodes() == [LESetRandomAddress.opcode, LECreateConnection.opcode])
        // Scan interval and window, filter policy 0, peer random, address, own random, timing.
        #expect(bench.lastParameters(LECreateConnection.opcode) == [0x60, 0x00, 0x60, 0x00, 0x00, 0x01] + peerBytes + [0x01] + defaultTimingBytes)
        #expect(connection.handle == 0x0040)
    }

    @Test func aTimeoutCancelsAndWaitsForTheControllersUnknownConnectionIdentifier() async throws {
        let bench = try await ConnectionBench.start()
        let finished = Lock(false)
        let attempt = Task {
            defer { finished.withLock { $0 = true } }
            return try await bench.connector.connect(to: ConnectionBench.peer, timeout: .milliseconds(100))
        }
        try await waitUntil { bench.sentOpcodes() == [LEExtendedCreateConnection.opcode, LECreateConnectionCancel.opcode] }
        // The cancel is acknowledged but the attempt's end has not come: still waiting.
        try await Task.sleep(for: .milliseconds(50))
        await bench.transport.drain()
        #expect(!finished.withLock { $0 })
        bench.inject(ConnectionBench.legacyComplete(.unknownConnectionIdentifier))
        await #expect(throws: ConnectionError.timedOut(ConnectionBench.peer, after: .milliseconds(100))) { try await attempt.value }
        #expect(ConnectionError.timedOut(ConnectionBench.peer, after: .seconds(10)).description
            == "no connection to C4:4B:4D:00:00:01/random: the device did not answer within 10 s; is it advertising connectably and in range?")
        // The initiator is free again.
        let connection = try await bench.connected()
        #expect(connection.isConnected)
    }

    @Test func aConnectionCompletedInTheRaceWithTheCancelIsDisconnected() async throws {
        let bench = try await ConnectionBench.start()
        bench.script(LECreateConnectionCancel.opcode) { _ in
            [bench.chip.complete(LECreateConnectionCancel.opcode, []), ConnectionBench.event(ConnectionBench.enhancedComplete())]
        }
        bench.script(Disconnect.opcode) { _ in
            [ConnectionBench.status(Disconnect.opcode), ConnectionBench.event(ConnectionBench.disconnection(reason: .connectionTerminatedByLocalHost))]
        }
        await #expect(throws: ConnectionError.timedOut(ConnectionBench.peer, after: .milliseconds(50))) {
            try await bench.connector.connect(to: ConnectionBench.peer, timeout: .milliseconds(50))
        }
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode, LECreateConnectionCancel.opcode, Disconnect.opcode])
        #expect(bench.connector.connections.isEmpty)
    }

    @Test func aCancelRefusedAsTooLateStillWaitsForTheCompletion() async throws {
        let bench = try await ConnectionBench.start()
        bench.script(LECreateConnectionCancel.opcode) { _ in
            [bench.chip.complete(LECreateConnectionCancel.opcode, []).withStatus(.commandDisallowed),
             ConnectionBench.event(ConnectionBench.legacyComplete(.connectionFailedToBeEstablished))]
        }
        await #expect(throws: ConnectionError.timedOut(ConnectionBench.peer, after: .milliseconds(50))) {
            try await bench.connector.connect(to: ConnectionBench.peer, timeout: .milliseconds(50))
        }
    }

    @Test func aCancelTheControllerNeverConfirmsIsReported() async throws {
        let bench = try await ConnectionBench.start(cancelTimeout: .milliseconds(100))
        await #expect(throws: ConnectionError.cancelNotConfirmed(ConnectionBench.peer)) {
            try await bench.connector.connect(to: ConnectionBench.peer, timeout: .milliseconds(50))
        }
        // A success that comes after all is nobody's: it is disconnected.
        bench.script(Disconnect.opcode) { _ in
            [ConnectionBench.status(Disconnect.opcode), ConnectionBench.event(ConnectionBench.disconnection(reason: .connectionTerminatedByLocalHost))]
        }
        bench.inject(ConnectionBench.legacyComplete())
        try await waitUntil { bench.sentOpcodes().last == Disconnect.opcode && bench.connector.connections.isEmpty }
    }

    @Test func taskCancellationCancelsOnTheController() async throws {
        let bench = try await ConnectionBench.start()
        bench.script(LECreateConnectionCancel.opcode) { _ in
            [bench.chip.complete(LECreateConnectionCancel.opcode, []), ConnectionBench.event(ConnectionBench.legacyComplete(.unknownConnectionIdentifier))]
        }
        let attempt = Task { try await bench.connector.connect(to: ConnectionBench.peer, timeout: unhurried) }
        try await waitUntil { bench.sentOpcodes() == [LEExtendedCreateConnection.opcode] }
        attempt.cancel()
        await #expect(throws: ConnectionError.cancelled(ConnectionBench.peer)) { try await attempt.value }
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode, LECreateConnectionCancel.opcode])
    }

    @Test func aFailedCompletionIsATypedErrorThatSaysWhatToDo() async throws {
        let bench = try await ConnectionBench.start()
        bench.completeCreateWith(ConnectionBench.legacyComplete(.connectionFailedToBeEstablished))
        let expected = ConnectionError.failed(ConnectionBench.peer, .connectionFailedToBeEstablished)
        await #expect(throws: expected) { try await bench.connector.connect(to: ConnectionBench.peer) }
        #expect(expected.description.contains("try again"))
        #expect(bench.connector.connections.isEmpty)
    }

    @Test func aRefusedCreateCommandIsAControllerError() async throws {
        let bench = try await ConnectionBench.start()
        bench.script(LEExtendedCreateConnection.opcode) { _ in [ConnectionBench.status(LEExtendedCreateConnection.opcode, .commandDisallowed)] }
        await #expect(throws: ConnectionError.controller(.commandFailed(LEExtendedCreateConnection.opcode, .commandDisallowed))) {
            try await bench.connector.connect(to: ConnectionBench.peer)
        }
    }

    @Test func invalidParametersAreRefusedBeforeAnythingIsSent() async throws {
        let bench = try await ConnectionBench.start()
        var parameters = ConnectionParameters()
        parameters.connection.supervisionTimeout = 10  // 100 ms, not above 2 x 50 ms
        await #expect(throws: ConnectionError.self) { try await bench.connector.connect(to: ConnectionBench.peer, parameters: parameters) }
        parameters = ConnectionParameters(scanInterval: 0x10, scanWindow: 0x20)
        await #expect(throws: ConnectionError.self) { try await bench.connector.connect(to: ConnectionBench.peer, parameters: parameters) }
        #expect(bench.sentOpcodes().isEmpty)
    }

    @Test func aSecondConnectQueuesBehindTheFirst() async throws {
        let bench = try await ConnectionBench.start()
        let first = Task { try await bench.connector.connect(to: ConnectionBench.peer, timeout: unhurried) }
        try await waitUntil { bench.sentOpcodes().count == 1 }
        let second = Task { try await bench.connector.connect(to: ConnectionBench.otherPeer, timeout: unhurried) }
        try await Task.sleep(for: .milliseconds(30))
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode])
        bench.inject(ConnectionBench.enhancedComplete(handle: 0x0040))
        #expect(try await first.value.handle == 0x0040)
        try await waitUntil { bench.sentOpcodes().count == 2 }
        #expect(bench.lastParameters(LEExtendedCreateConnection.opcode)?[3] == 0x03)
        bench.inject(ConnectionBench.enhancedComplete(handle: 0x0041, peer: ConnectionBench.otherPeer))
        let other = try await second.value
        #expect(other.peer == ConnectionBench.otherPeer)
        #expect(bench.connector.connections.map(\.handle) == [0x0040, 0x0041])
    }

    @Test func aQueuedConnectTimesOutWithoutSendingAnything() async throws {
        let bench = try await ConnectionBench.start()
        let first = Task { try await bench.connector.connect(to: ConnectionBench.peer, timeout: unhurried) }
        try await waitUntil { bench.sentOpcodes().count == 1 }
        await #expect(throws: ConnectionError.timedOut(ConnectionBench.otherPeer, after: .milliseconds(50))) {
            try await bench.connector.connect(to: ConnectionBench.otherPeer, timeout: .milliseconds(50))
        }
        #expect(bench.sentOpcodes() == [LEExtendedCreateConnection.opcode])
        bench.inject(ConnectionBench.enhancedComplete())
        _ = try await first.value
    }

    @Test func incomingConnectionsAsPeripheralAreStreamed() async throws {
        let bench = try await ConnectionBench.start()
        let incoming = bench.connector.incomingConnections()
        let central = DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public)
        bench.inject(ConnectionBench.legacyComplete(handle: 0x0042, role: .peripheral, peer: central))
        var iterator = incoming.makeAsyncIterator()
        let connection = try #require(await iterator.next())
        #expect(connection.role == .peripheral)
        #expect(connection.peer == central)
        #expect(bench.connector.connection(handle: 0x0042) === connection)
    }

    /// Centrals keep connecting while nobody reads the incoming stream: past its buffer a
    /// connection would be a live link nobody will ever serve, so it is disconnected
    /// (reason 0x14, low resources) and counted instead of being kept or forgotten.
    @Test func incomingConnectionsPastTheStreamBufferAreDisconnected() async throws {
        let bench = try await ConnectionBench.start()
        let incoming = bench.connector.incomingConnections()
        let central = DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public)
        let limit = Connector.incomingConnectionBufferLimit
        for handle in 1...UInt16(limit + 1) {
            bench.inject(ConnectionBench.legacyComplete(handle: handle, role: .peripheral, peer: central))
        }
        // The newest is the one refused; the ones waiting in the stream stay up.
        try await waitUntil { bench.sentOpcodes().contains(Disconnect.opcode) }
        #expect(bench.lastParameters(Disconnect.opcode) == [UInt8(limit + 1), 0x00, 0x14])
        #expect(bench.sentOpcodes().filter { $0 == Disconnect.opcode }.count == 1)
        #expect(bench.connector.droppedIncomingConnections == 1)
        var iterator = incoming.makeAsyncIterator()
        #expect(await iterator.next()?.handle == 1)
    }

    @Test func aHardwareErrorEndsTheAttemptAndEveryConnection() async throws {
        let bench = try await ConnectionBench.start()
        let connection = try await bench.connected()
        let attempt = Task { try await bench.connector.connect(to: ConnectionBench.otherPeer, timeout: unhurried) }
        try await waitUntil { bench.sentOpcodes().count == 2 }
        bench.inject(.hardwareError(.init(hardwareCode: 0x42)))
        await #expect(throws: ConnectionError.controller(.hardwareError(code: 0x42))) { try await attempt.value }
        #expect(!connection.isConnected)
        #expect(connection.disconnectReason == .hardwareFailure)
    }
}
