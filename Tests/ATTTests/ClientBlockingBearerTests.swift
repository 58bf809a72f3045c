@testable import ATT
import BluetoothCore
import Dispatch
import TestSupport
import Testing

/// A bearer whose `send` may wait (the kernel's socket holds writes while it pairs): what the
/// client sends because of what it read (a confirmation, the next queued request) must not
/// hold the thread that reads.
@Suite struct ClientBlockingBearerTests {
    @Test func aConfirmationThatWaitsToBeSentDoesNotHoldTheNextValue() async throws {
        let bearer = SlowSendBearer()
        let client = ATTClient(bearer: bearer)
        let arrived = Lock<[[UInt8]]>([])
        let subscription = client.addValueHandler(handle: 0x0010) { value in arrived.withLock { $0.append(value.value) } }
        defer { subscription.cancel() }
        // An indication, whose confirmation's send is held back, then a notification: the
        // notification must arrive while the confirmation still waits (before, the reader
        // sat in that send).
        bearer.inject([[0x1D, 0x10, 0x00, 0x01], [0x1B, 0x10, 0x00, 0x02]])
        try await withDeadline("both values while the confirmation is held") {
            while arrived.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(arrived.withLock { $0 } == [[0x01], [0x02]])
        #expect(bearer.sent.isEmpty)
        bearer.release()
        try await withDeadline("the confirmation") { while bearer.sent.isEmpty { try await Task.sleep(for: .milliseconds(5)) } }
        #expect(bearer.sent == [[0x1E]])
    }
}
