@testable import ATT
import BluetoothCore
import TestSupport
import Testing

/// What the ATT client logs: a warning per PDU it had to drop, carrying the counter that
/// counted it, and one warning when a transaction's deadline fires.
@Suite struct ClientLoggingTests {
    @Test func eachMalformedPDULogsOneWarningWithTheRunningCount() async throws {
        let logs = LogCapture()
        let (client, bearer) = makeClient([step("1E")], logs: logs)
        bearer.inject("1D 05")  // an indication with half a handle
        bearer.inject("1B 07 00 01")  // a good notification: nothing logged
        bearer.inject("")
        await bearer.drain()
        #expect(client.statistics.malformedPDUs == 2)
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 2)
        #expect(warnings.map { $0.metadata["malformedPDUs"] } == ["1", "2"])
    }

    @Test func anUnsolicitedResponseLogsOneWarning() async throws {
        let logs = LogCapture()
        let (client, bearer) = makeClient([], logs: logs)
        bearer.inject("0B 01")
        await bearer.drain()
        #expect(client.statistics.unsolicitedResponses == 1)
        #expect(logs.lines(atLeast: .warning).map { $0.metadata["unsolicitedResponses"] } == ["1"])
    }

    @Test func aTransactionDeadlineThatFiresLogsOneWarning() async throws {
        let logs = LogCapture()
        let (client, _) = makeClient([step("0A 03 00")], timeout: .milliseconds(50), logs: logs)
        let error = await attError { () async throws(ATTError) in try await client.read(3) }
        #expect(error == .transactionTimedOut(request: .readRequest, timeout: .milliseconds(50)))
        let warnings = logs.lines(atLeast: .warning)
        #expect(warnings.count == 1)
        #expect(warnings.first?.message == "transaction timed out; bearer closed")
        #expect(warnings.first?.metadata["request"] == "\(ATTOpcode.readRequest)")
    }
}
