import Testing
@testable import HCI

/// The event type's text, as `scan --json` writes it (bytes) and as `description` gives it.
@Suite struct AdvertisementEventTypeTests {
    func text(_ type: Advertisement.EventType) -> String {
        var bytes: [UInt8] = []
        type.appendDescription(to: &bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == type.description)
        return text
    }

    @Test func flagsAreListedInOrderAndNoFlagIsNonConnectable() {
        #expect(text([]) == "non-connectable")
        #expect(text([.legacy, .scannable, .connectable]) == "connectable,scannable,legacy")
        #expect(text([.connectable, .scannable, .directed, .scanResponse, .legacy, .scanResponseOnly])
            == "connectable,scannable,directed,scan-response,legacy,scan-response-only")
        // Bits the type does not name are not printed: alone they read as no flag.
        #expect(text(.init(rawValue: 0xC0)) == "non-connectable")
        #expect(text(.init(rawValue: 0xC1)) == "connectable")
    }
}
