@testable import ATT
import BluetoothCore
import Dispatch
import Glibc
import TestSupport
import Testing

/// A bearer whose `send` may wait (the kernel's socket holds writes while it pairs): what the
/// client sends because of what it read (a confirmation, the next queued request) must not
/// hold the thread that reads.
@Suite struct ClientBlockingBearerTests {
    final class SlowSendBearer: ATTBearer {
        private let reader = DispatchQueue(label: "slow-send-reader")
        private let state = Lock<(receive: (@Sendable ([UInt8]) -> Void)?, sent: [[UInt8]], released: Bool)>((nil, [], false))

        func start(
            receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
            closed _: @escaping @Sendable (ATTBearerError) -> Void
        ) {
            state.withLock { $0.receive = receive }
        }

        /// Every send waits until the test releases it (60 s at most), as a write the
        /// kernel holds back while it pairs.
        func send(_ pdu: [UInt8]) throws(ATTBearerError) {
            for _ in 0..<6000 where !state.withLock({ $0.released }) { usleep(10_000) }
            state.withLock { $0.sent.append(pdu) }
        }

        func release() { state.withLock { $0.released = true } }

        var sent: [[UInt8]] { state.withLock { $0.sent } }
        var mtu: UInt16 { 23 }
        var mtuIsNegotiatedBelow: Bool { false }
        var sendNeverWaits: Bool { false }
        func mtuExchanged(_: UInt16) {}
        func close(reason _: ATTBearerError) {}

        func inject(_ pdus: [[UInt8]]) {
            let receive = state.withLock { $0.receive }
            reader.async { for pdu in pdus { receive?(pdu) } }
        }
    }

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
