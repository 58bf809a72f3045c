import BluetoothCore
@testable import HCI
@testable import L2CAP
import Testing
import TestSupport

/// Our signaling requests on the one pending-answer primitive: a cancelled caller returns at
/// once, an answered request leaves no deadline armed, a disconnection ends the wait.
@Suite struct SignalingWaitTests {
    static let request = ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 4, timeoutMultiplier: 600)

    @Test func aCancelledRequestReturnsAtOnceAndItsLateAnswerIsCounted() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        let waiting = Task { try await harness.manager.requestConnectionParameterUpdate(Self.request, connection: 0x40, timeout: .seconds(60)) }
        let sent = try await harness.nextSignaling(handle: 0x40)
        let clock = ContinuousClock()
        let start = clock.now
        waiting.cancel()
        let outcome = try await withDeadline("the cancelled request", seconds: 10) { await waiting.result }
        #expect(clock.now - start < .seconds(30), "a cancelled wait returns at once, not at its 60 s deadline")
        #expect(throws: L2CAPError.signalingRequestCancelled) { try outcome.get() }
        // Its identifier is free again, and the peer's late answer finds nothing.
        #expect(harness.manager.state.withLock { $0.connections[0x40]?.pendingRequests.isEmpty } == true)
        await harness.receiveSignaling(SignalingCommand(identifier: sent.identifier, ConnectionParameterUpdateResponse(result: .accepted)), handle: 0x40)
        #expect(harness.manager.statistics.unexpectedSignalingResponses == 1)
    }

    @Test func answeredRequestsLeaveNoDeadlineArmed() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        for _ in 0..<1_000 {
            let waiting = Task { try await harness.manager.requestConnectionParameterUpdate(Self.request, connection: 0x40) }
            let sent = try await harness.nextSignaling(handle: 0x40)
            await harness.receiveSignaling(SignalingCommand(identifier: sent.identifier, ConnectionParameterUpdateResponse(result: .accepted)), handle: 0x40)
            try await waiting.value
        }
        // Each request armed a 30 s deadline; every one was cancelled by its answer.
        #expect(DeadlineTimer.shared.armedCount < 600, "the shared timer also holds what the tests beside this one armed (118 at once seen in CI)")
        #expect(harness.manager.state.withLock { $0.signalingAnswers.count } == 0)
    }

    @Test func aDisconnectionEndsTheWaitWithItsReason() async throws {
        let harness = try await L2CAPHarness.make()
        await harness.connect(0x40, role: .peripheral)
        let waiting = Task { try await harness.manager.requestConnectionParameterUpdate(Self.request, connection: 0x40, timeout: .seconds(60)) }
        _ = try await harness.nextSignaling(handle: 0x40)
        await harness.disconnect(0x40, reason: .remoteUserTerminatedConnection)
        let outcome = try await withDeadline("the request on a lost link", seconds: 10) { await waiting.result }
        #expect(throws: L2CAPError.disconnected(reason: .remoteUserTerminatedConnection)) { try outcome.get() }
        #expect(harness.manager.state.withLock { $0.signalingAnswers.count } == 0)
    }
}
