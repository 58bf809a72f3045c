import ATT
import BluetoothCore
import Dispatch
import TestSupport

/// The ATT server as a hostile client's peer: each input is a sequence of PDUs (requests,
/// commands, confirmations, garbage) delivered the way the bearer's reader thread delivers
/// them, each request waited for before the next (as a client must), against the tests'
/// database (`InMemoryAttributeStore.testDatabase()`).
enum ATTServerTarget {
    /// A bearer that records what is sent and wakes the fuzzing thread on each send.
    final class RecordingBearer: ATTBearer {
        struct State {
            var receive: (@Sendable ([UInt8]) -> Void)?
            var sent: [[UInt8]] = []
            var mtu = ATTConstants.minimumLEMTU
            var closed = false
        }
        let state = Lock(State())
        let sends = DispatchSemaphore(value: 0)

        func start(
            receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
            closed: @escaping @Sendable (ATTBearerError) -> Void
        ) {
            state.withLock { $0.receive = receive }
        }
        func send(_ pdu: [UInt8]) throws(ATTBearerError) {
            try state.withLock { state throws(ATTBearerError) in
                if state.closed { throw .closedByHost }
                state.sent.append(pdu)
            }
            sends.signal()
        }
        var mtu: UInt16 { state.withLock { $0.mtu } }
        var mtuIsNegotiatedBelow: Bool { false }
        /// It only records: the server answers stored reads on the fuzzing thread, as over L2CAP.
        var sendNeverWaits: Bool { true }
        func mtuExchanged(_ mtu: UInt16) { state.withLock { $0.mtu = mtu } }
        func close(reason: ATTBearerError) { state.withLock { $0.closed = true } }

        func deliver(_ pdu: [UInt8]) { state.withLock { $0.receive }?(pdu) }
        var sentCount: Int { state.withLock { $0.sent.count } }

        /// The `count`th PDU sent, waiting up to 5 s for it: a request left unanswered is a
        /// finding (the client would wait 30 s, then drop the link).
        func waitForSent(_ count: Int, after pdu: [UInt8]) -> [UInt8] {
            while true {
                if let sent = state.withLock({ $0.sent.count >= count ? $0.sent[count - 1] : nil }) { return sent }
                expect(sends.wait(timeout: .now() + 5) == .success, "no answer to \(Hex.string(pdu, separator: " "))")
            }
        }
    }

    @Sendable static func server(_ bytes: [UInt8]) {
        let bearer = RecordingBearer()
        let verifier: ATTSignatureVerifier = { command, _ in
            command.authenticationSignature.last == 0x5A ? ATTLinkSecurity(isEncrypted: true, keySize: 16) : nil
        }
        let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: 1, verifier: verifier)
        let client = ATTClient(bearer: bearer, server: server)
        var commands = 0
        for pdu in FuzzPieces(bytes) + [[0x0A, 0x03, 0x00]] {
            guard let first = pdu.first else {
                bearer.deliver(pdu)
                continue
            }
            let opcode = ATTOpcode(rawValue: first)
            let isRequest = opcode.kind == .request || opcode.kind == nil
            let invalid = pdu.count > Int(bearer.mtu) || (try? ATTPDU(decoding: pdu)) == nil
            let before = bearer.sentCount
            bearer.deliver(pdu)
            if opcode.kind == .command { commands += 1 }
            guard isRequest else { continue }
            // The first PDU sent after delivery: an indication's confirmation goes out inside
            // `deliver`, so nothing but the answer can come now.
            let answer = bearer.waitForSent(before + 1, after: pdu)
            // Only formatted for a finding's message (expect's is an autoclosure).
            func trace() -> String { "\(Hex.string(pdu, separator: " ")) → \(Hex.string(answer, separator: " "))" }
            if invalid {
                expect(answer == [0x01, first, 0x00, 0x00, 0x04], "not Invalid PDU: \(trace())")
            } else if opcode.kind == nil {
                expect(answer == [0x01, first, 0x00, 0x00, 0x06], "not Request Not Supported: \(trace())")
            } else {
                expect(answer.first == opcode.responseOpcode?.rawValue || (answer.count == 5 && answer[0] == 0x01 && answer[1] == first),
                       "not its answer: \(trace())")
            }
        }
        // The final Read was answered after every command before it was handled.
        let statistics = server.statistics
        expect(server.closedReason == nil, "the server closed: \(String(describing: server.closedReason))")
        expect(statistics.protocolViolations == 0, "a violation while every request was waited for")
        expect(statistics.commandsReceived == commands, "\(commands) commands, \(statistics.commandsReceived) accounted for: \(statistics)")
        client.close()
    }
}
