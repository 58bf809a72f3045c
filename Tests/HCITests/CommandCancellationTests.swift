import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// A command's caller and the one pending-answer primitive: cancelling withdraws a queued
/// command at once, a sent one still gets its answer, and an answered command leaves no
/// deadline armed behind it.
@Suite struct CommandCancellationTests {
    @Test func aCancelledQueuedCommandReturnsAtOnceAndNeverGoesOut() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        let chip = FakeChip()
        // One credit: Reset takes it and is never answered, so Read BD_ADDR stays queued.
        let first = Task { try await controller.send(Reset(), timeout: .seconds(60)) }
        try await waitUntil { transport.sent.count == 1 }
        let second = Task { try await controller.send(ReadBDADDR(), timeout: .seconds(60)) }
        try await waitUntil { controller.state.withLock { $0.waiting.count } == 1 }
        let clock = ContinuousClock()
        let start = clock.now
        second.cancel()
        await #expect(throws: HCIError.commandCancelled(ReadBDADDR.opcode)) { try await second.value }
        #expect(clock.now - start < .seconds(30), "a cancelled wait returns at once, not at its 60 s deadline")
        // The credit comes back: nothing but Reset was ever sent.
        transport.inject([chip.complete(Reset.opcode, [])])
        _ = try await first.value
        #expect(opcodes(transport.sent) == [Reset.opcode])
        #expect(controller.state.withLock { $0.answers.count } == 0)
    }

    @Test func aCancelledSentCommandStillGetsItsAnswer() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        let chip = FakeChip()
        let sent = Task { try await controller.send(ReadBDADDR(), timeout: .seconds(60)) }
        try await waitUntil { transport.sent.count == 1 }
        sent.cancel()
        // Its effect is real on the controller, so the caller hears the outcome.
        transport.inject(chip.answer(transport.sent[0]))
        #expect(try await sent.value.address == chip.address)
    }

    @Test func cleanUpCommandsGoOutFromACancelledTask() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        let chip = FakeChip()
        let blocker = Task { try await controller.send(Reset(), timeout: .seconds(60)) }
        try await waitUntil { transport.sent.count == 1 }
        let cleanUp = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await controller.send(ReadBDADDR(), timeout: .seconds(60), cancellable: false)
        }
        try await waitUntil { controller.state.withLock { $0.waiting.count } == 1 }
        transport.inject([chip.complete(Reset.opcode, [])])
        _ = try await blocker.value
        try await waitUntil { transport.sent.count == 2 }
        transport.inject(chip.answer(transport.sent[1]))
        #expect(try await cleanUp.value.address == chip.address)
    }

    @Test func answeredCommandsLeaveNoDeadlineArmed() async throws {
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport)
        try controller.start()
        let chip = FakeChip()
        // Each answer is delivered from the transport's own queue. (A task polling `sent`
        // copied the whole growing log at every look, and under ThreadSanitizer beside the
        // other suites one answer took more than 30 s.)
        transport.setResponder { chip.answer($0) }
        for _ in 0..<2_000 { _ = try await controller.send(ReadBDADDR(), timeout: .seconds(30)) }
        // Each command armed a 30 s deadline; every one was cancelled with its answer. (The
        // shared timer may hold other tests' deadlines, never 2,000 of these.)
        #expect(DeadlineTimer.shared.armedCount < 1000, "the shared timer also holds what the tests beside this one armed (118 at once seen in CI)")
        #expect(controller.state.withLock { $0.answers.count } == 0)
    }
}
