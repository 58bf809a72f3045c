import BluetoothCore
@testable import HCI
import HCITransport
import Logging
import Testing
import TestSupport

/// What the HCI layer logs, one test per class of line: input the controller got wrong (a
/// warning per occurrence, with its counter), deadlines that fired, hardware errors and the
/// recovery, connection outcomes.
@Suite struct HCILoggingTests {
    func makeController(_ logs: LogCapture, chip: FakeChip = FakeChip()) throws -> (HCIController, ScriptedTransport) {
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport, logger: logs.logger(HCIController.defaultLogLabel))
        try controller.start()
        return (controller, transport)
    }

    @Test func eachMalformedEventLogsOneWarningWithTheRunningCount() async throws {
        let logs = LogCapture()
        let (controller, transport) = try makeController(logs)
        defer { withExtendedLifetime(controller) {} }
        transport.inject([
            HCIPacket(.event, [0x1A, 0x05, 0x01]), // length says 5, one byte present
            HCIPacket(.event, [0x1A, 0x01, 0x01]), // a good one: no line
            HCIPacket(.event, [0x0E]),
        ])
        await transport.drain()
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 2)
        #expect(warnings.map { $0.metadata["malformedEvents"] } == ["1", "2"])
    }

    @Test func aMalformedACLPacketLogsOneWarningWithItsCount() async throws {
        let logs = LogCapture()
        let (controller, transport) = try makeController(logs)
        defer { withExtendedLifetime(controller) {} }
        transport.inject([HCIPacket(.acl, [0x40, 0x00, 0x09, 0x00, 0x01])])
        await transport.drain()
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["malformedACLPackets"] == "1")
    }

    @Test func anExtendedAdvertisementLeftOpenLogsOneWarningWithItsCount() async throws {
        let logs = LogCapture()
        let rig = try await ScanRig(logs: logs)
        let session = try await rig.scanner.scan { _ in }
        await rig.inject(extended(extendedReport([], sid: 1, status: .incompleteMoreToCome, data: [1])))
        rig.clock.advance(milliseconds: 3001)
        await rig.inject(extended(extendedReport([], sid: 1, data: [2])))
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["unfinishedAssemblies"] == "1")
        await session.stop()
    }

    @Test func aCommandCompleteForNothingSentLogsOneWarning() async throws {
        let logs = LogCapture()
        let (controller, transport) = try makeController(logs)
        defer { withExtendedLifetime(controller) {} }
        transport.inject([FakeChip().complete(ReadBDADDR.opcode, [1, 2, 3, 4, 5, 6])])
        await transport.drain()
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["unmatchedCommandCompletes"] == "1")
    }

    @Test func aCommandDeadlineThatFiresLogsOneWarningNamingTheCommand() async throws {
        let logs = LogCapture()
        let transport = ScriptedTransport()
        let controller = HCIController(transport: transport, logger: logs.logger(HCIController.defaultLogLabel))
        try controller.start()
        await #expect(throws: HCIError.commandTimedOut(ReadBDADDR.opcode, milliseconds: 50)) {
            try await controller.send(ReadBDADDR(), timeout: .milliseconds(50))
        }
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["command"] == "Read BD_ADDR")
        #expect(warnings.first?.metadata["commandTimeouts"] == "1")
    }

    @Test func aHardwareErrorLogsAnErrorAndTheRecoveryANotice() async throws {
        let logs = LogCapture()
        let (controller, transport) = try makeController(logs)
        try await controller.powerOn()
        var updates = controller.statusUpdates().makeAsyncIterator()
        _ = await updates.next() // ready
        transport.inject([HCIPacket(.event, [0x10, 0x01, 0x42])])
        while let status = await updates.next() {
            if case .ready = status { break }
        }
        // The notice is written right after the status is published.
        try await waitUntil { logs.lines(at: .notice).count == 1 }
        let errors = logs.lines(at: .error)
        #expect(errors.count == 1)
        #expect(errors.first?.metadata["hardwareCode"] == "0x42")
        #expect(errors.first?.metadata["hardwareErrors"] == "1")
        #expect(logs.lines(at: .warning).isEmpty)
    }

    @Test func connectionOutcomesLogAtInfo() async throws {
        let logs = LogCapture()
        let bench = try await ConnectionBench.start(logs: logs)
        bench.completeCreateWith(ConnectionBench.legacyComplete(.connectionFailedToBeEstablished))
        await #expect(throws: ConnectionError.self) { try await bench.connector.connect(to: ConnectionBench.peer) }
        bench.completeCreateWith(ConnectionBench.legacyComplete(handle: 0x0041))
        let connection = try await bench.connector.connect(to: ConnectionBench.peer)
        bench.inject(ConnectionBench.disconnection(handle: connection.handle, reason: .remoteUserTerminatedConnection))
        await bench.transport.drain()
        let outcomes = logs.lines(at: .info)
        #expect(outcomes.map(\.message) == ["connection failed", "connected", "disconnected"])
        #expect(outcomes.map { $0.metadata["peer"] } == Array(repeating: "\(ConnectionBench.peer)", count: 3))
        #expect(outcomes[1].metadata["handle"] == "0x0041")
        #expect(logs.lines(atLeast: .warning).isEmpty)
    }

    @Test func aConnectionAttemptWhoseDeadlinePassesLogsOneWarning() async throws {
        let logs = LogCapture()
        let bench = try await ConnectionBench.start(logs: logs)
        bench.script(LECreateConnectionCancel.opcode) { packet in
            [bench.chip.complete(opcodes([packet])[0], []), ConnectionBench.event(ConnectionBench.legacyComplete(.unknownConnectionIdentifier))]
        }
        await #expect(throws: ConnectionError.timedOut(ConnectionBench.peer, after: .milliseconds(50))) {
            try await bench.connector.connect(to: ConnectionBench.peer, timeout: .milliseconds(50))
        }
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.map(\.message) == ["connection attempt timed out"])
    }
}
