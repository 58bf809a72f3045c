import BluetoothCore
import HCI
import L2CAP
import Testing
import TestSupport

/// What L2CAP logs: each drop of peer data is one warning carrying the counter that
/// counted it; nothing is logged for traffic that is fine.
@Suite struct L2CAPLoggingTests {
    @Test func aMalformedSignalingCommandLogsOneWarningWithItsCount() async throws {
        let logs = LogCapture()
        let harness = try await L2CAPHarness.make(logs: logs)
        await harness.connect(0x40)
        // Connection Parameter Update Request whose length field says 8, with 2 octets.
        await harness.receive([0x12, 0x01, 0x08, 0x00, 0x01, 0x02], cid: .leSignaling, handle: 0x40)
        await harness.receive([0x12, 0x02, 0x08, 0x00, 0x01, 0x02], cid: .leSignaling, handle: 0x40)
        let warnings = logs.lines(atLeast: .warning)
        #expect(harness.manager.statistics.malformedSignalingCommands == 2)
        #expect(warnings.count == 2)
        #expect(warnings.map { $0.metadata["malformedSignalingCommands"] } == ["1", "2"])
        #expect(warnings.allSatisfy { $0.metadata["handle"] == "0x0040" })
    }

    @Test func aReassemblyDropLogsOneWarningNamingItsCounter() async throws {
        let logs = LogCapture()
        let harness = try await L2CAPHarness.make(logs: logs)
        await harness.connect(0x40)
        // A continuation with no start.
        await harness.inject([ACLDataPacket(connectionHandle: 0x40, packetBoundary: .continuing, data: [1, 2, 3])])
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["unexpectedContinuations"] == "1")
    }

    @Test func dataForAnUnknownConnectionLogsOneWarning() async throws {
        let logs = LogCapture()
        let harness = try await L2CAPHarness.make(logs: logs)
        await harness.receive([0x0A, 0x01, 0x00], cid: .attributeProtocol, handle: 0x77)
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["unknownConnectionFragments"] == "1")
    }

    @Test func aSignalingResponseToNothingLogsOneWarning() async throws {
        let logs = LogCapture()
        let harness = try await L2CAPHarness.make(logs: logs)
        await harness.connect(0x40)
        // Connection Parameter Update Response (accepted) to nothing we asked.
        await harness.receive([0x13, 0x05, 0x02, 0x00, 0x00, 0x00], cid: .leSignaling, handle: 0x40)
        #expect(logs.lines(atLeast: .warning).map { $0.metadata["unexpectedSignalingResponses"] } == ["1"])
    }
}
