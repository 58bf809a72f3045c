import BluetoothCore
import HCI
@testable import SMP
import Testing
import TestSupport

/// What the SMP driver logs: every pairing's outcome at info, a timer that fired as a
/// warning.
@Suite struct SecurityManagerLoggingTests {
    /// The worker's watchdog: it warns when the worker makes no progress for 5 s, which a
    /// loaded run causes by starving the test's tasks (a full AddressSanitizer run once for
    /// 30 s, a full CI run once during a timer test). Not a line these tests are about.
    static let watchdog = "pairing's end told without waiting for our last PDUs: the controller took nothing for 5 s"

    @Test func aRefusedPairingLogsItsOutcomeAtInfo() async throws {
        let link = try await SMPLink.make(role: .central)
        let logs = LogCapture()
        let manager = try link.manager(logs: logs)
        let pairing = Task { await pairingError { try await manager.pair() } }
        guard case .pairingRequest = try await link.nextSent() else { Issue.record("no Pairing Request"); return }
        await link.peerSends(.pairingFailed(.pairingNotSupported))
        let error = try await withDeadline("a refused pair()", seconds: 10) { await pairing.value }
        #expect(error != nil)
        let outcomes = logs.lines(at: .info)
        #expect(outcomes.map(\.message) == ["pairing failed"])
        #expect(outcomes.first?.metadata["peer"] == "\(link.connection.peer)")
        #expect(outcomes.first?.metadata["error"] == error.map { "\($0)" })
        // Nothing else is worth a warning (but the watchdog's).
        #expect(logs.lines(atLeast: .warning).filter { $0.message != Self.watchdog }.isEmpty)
    }

    @Test func anSMPTimerThatFiresLogsOneWarning() async throws {
        let link = try await SMPLink.make(role: .central)
        let logs = LogCapture()
        let manager = try link.manager(smpTimeout: .milliseconds(100), logs: logs)
        let error = try await withDeadline("pair() against a silent peer", seconds: 30) { await pairingError { try await manager.pair() } }
        #expect(error == .timedOut)
        #expect(logs.lines(atLeast: .warning).map(\.message).filter { $0 != Self.watchdog } == ["SMP timer expired"])
        #expect(logs.lines(at: .info).map(\.message) == ["pairing failed"])
    }
}
