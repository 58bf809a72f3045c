@testable import ATT
import Testing
import TestSupport

/// A Read or Read Blob of a value the store holds is answered on the bearer's thread,
/// without a task; what must stay as it was on the task's path.
@Suite struct ServerImmediateReadTests {
    /// A Write Command still waiting for the drain task is performed before a Read that
    /// arrived behind it is answered: the read sees the written value.
    @Test func aReadBehindAWaitingWriteCommandSeesTheWrite() async throws {
        let fixture = ServerFixture()
        fixture.bearer.inject("52 05 00 34 12")
        try await fixture.converse([("0A 05 00", "0B 34 12")])
    }

    /// Admission (robust caching) changes a change-unaware client's state when asked, so
    /// it is asked once per request: on the bearer's thread for a stored value, and not
    /// again when the read goes on to the task (an attribute whose authorization must be
    /// asked, a store that does not hold the value).
    @Test func admissionIsAskedOncePerRead() async throws {
        let fixture = ServerFixture()
        fixture.store.setAuthorization(nil, for: 0x0010)
        try await fixture.converse([
            ("0A 03 00", "0B 42 61 72 65 42 4C 45"),
            ("0A 10 00", "0B 5F"),
            ("0C 08 00 62 00", "0D 62 63"),
        ])
        #expect(fixture.store.admissions == 3)
    }

    /// Refusals on the bearer's thread carry the same codes and handles as on the task's
    /// path: handle 0, no such handle, not readable, link not encrypted, offset past the end.
    @Test func refusalsAreTheSame() async throws {
        try await ServerFixture().converse([
            ("0A 00 00", "01 0A 00 00 01"),
            ("0A 40 00", "01 0A 40 00 01"),
            ("0A 12 00", "01 0A 12 00 02"),
            ("0A 0A 00", "01 0A 0A 00 05"),
            ("0C 08 00 65 00", "01 0C 08 00 07"),
        ])
    }
}
