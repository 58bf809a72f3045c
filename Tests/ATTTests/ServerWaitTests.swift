@testable import ATT
import BluetoothCore
import Testing
import TestSupport

/// Indications on the pending-answer primitive, the shared link, and ranges wider than one
/// page of the store.
@Suite struct ServerWaitTests {
    @Test func confirmedIndicationsLeaveNoDeadlineArmed() async throws {
        let fixture = ServerFixture()
        let server = fixture.server, bearer = fixture.bearer
        let count = 1_000
        for index in 1...count {
            let indication = Task { try await server.indicate(handle: 0x0003, value: [UInt8(truncatingIfNeeded: index)]) }
            try await withDeadline("indication \(index)") { await bearer.waitForSent(index) }
            bearer.inject("1E")
            try await withDeadline("confirmation \(index)") { try await indication.value }
        }
        // Each indication armed a 30 s deadline; every one was cancelled by its confirmation.
        // (The shared timer may hold other tests' deadlines, never 1,000 of these.)
        #expect(DeadlineTimer.shared.armedCount < 600, "the shared timer also holds what the tests beside this one armed (118 at once seen in CI)")
        #expect(server.state.withLock { $0.indications.count } == 0)
        #expect(server.statistics.indicationsConfirmed == count)
    }

    @Test func aCancelledIndicationReturnsAtOnceAndAQueuedOneIsWithdrawn() async throws {
        let fixture = ServerFixture()
        let server = fixture.server, bearer = fixture.bearer
        let outstanding = Task { try await server.indicate(handle: 0x0003, value: [0x01]) }
        try await withDeadline("the first indication") { await bearer.waitForSent(1) }
        let queued = Task { try await server.indicate(handle: 0x0003, value: [0x02]) }
        outstanding.cancel()
        queued.cancel()
        let errors = try await withDeadline("both callers") {
            [await Self.error(of: outstanding), await Self.error(of: queued)]
        }
        #expect(errors == [.cancelled, .cancelled])
        // The outstanding one still holds the bearer until confirmed; the queued one never goes.
        bearer.inject("1E")
        let next = Task { try await server.indicate(handle: 0x0003, value: [0x03]) }
        try await withDeadline("the next indication") { await bearer.waitForSent(2) }
        #expect(bearer.sentHex == ["1D 03 00 01", "1D 03 00 03"])
        bearer.inject("1E")
        try await withDeadline("its confirmation") { try await next.value }
    }

    static func error(of task: Task<Void, any Error>) async -> ATTServerError? {
        do {
            try await task.value
            return nil
        } catch {
            return error as? ATTServerError
        }
    }

    @Test func theSameLinkIsGATTClientAndServerAtOnce() async throws {
        let fixture = ServerFixture()
        let client = fixture.client, bearer = fixture.bearer
        let read = Task { try await client.read(0x0001).attributeValue }
        try await withDeadline("our request") { await bearer.waitForSent(1) }
        // The peer's own request arrives before its answer to ours.
        bearer.inject("0A 03 00")
        try await withDeadline("our answer to the peer") { await bearer.waitForSent(2) }
        bearer.inject("0B 99")
        #expect(try await read.value == [0x99])
        #expect(bearer.sentHex == ["0A 01 00", "0B 42 61 72 65 42 4C 45"])
    }

    @Test func rangesWiderThanOnePageOfTheStore() async throws {
        let store = InMemoryAttributeStore()
        for handle in UInt16(1)...300 {
            let type = BluetoothUUID(UInt16(handle % 3 == 0 ? 0x2A00 : 0x2A01))
            store.add(ATTAttribute(handle: handle, type: type, permissions: .readOnly), value: [UInt8(truncatingIfNeeded: handle), 0x01])
        }
        try await ServerFixture(store: store).converse([
            // Handle 0x00FF (255) is the only 0x2A00 holding FF 01.
            ("06 01 00 FF FF 00 2A FF 01", "07 FF 00 FF 00"),
            ("08 C8 00 FF FF 00 2A", "09 04 C9 00 C9 01 CC 00 CC 01 CF 00 CF 01 D2 00 D2 01 D5 00 D5 01"),
            ("08 2D 01 FF FF 00 2A", "01 08 2D 01 0A"),
        ])
    }
}
