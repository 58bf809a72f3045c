import ATT
import BluetoothCore
import Dispatch
import TestSupport

/// The ATT server as a hostile client's peer: each input is a sequence of PDUs (requests,
/// commands, confirmations, garbage) delivered the way the bearer's reader thread delivers
/// them, each request waited for before the next (as a client must), against the tests'
/// database (`InMemoryAttributeStore.testDatabase()`).
enum ATTServerTarget {
    /// A bearer that records what is sent and hands the awaited answer to the waiting
    /// conversation.
    final class RecordingBearer: ATTBearer {
        struct State {
            var receive: (@Sendable ([UInt8]) -> Void)?
            var sent: [[UInt8]] = []
            var mtu = ATTConstants.minimumLEMTU
            var closed = false
            var waiter: (count: Int, continuation: CheckedContinuation<[UInt8], Never>)?
        }
        let state = Lock(State())

        func start(
            receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
            closed: @escaping @Sendable (ATTBearerError) -> Void
        ) {
            state.withLock { $0.receive = receive }
        }
        func send(_ pdu: [UInt8]) throws(ATTBearerError) {
            let woken = try state.withLock { state throws(ATTBearerError) -> (CheckedContinuation<[UInt8], Never>, [UInt8])? in
                if state.closed { throw .closedByHost }
                state.sent.append(pdu)
                guard let waiter = state.waiter, state.sent.count >= waiter.count else { return nil }
                state.waiter = nil
                return (waiter.continuation, state.sent[waiter.count - 1])
            }
            if let (continuation, answer) = woken { continuation.resume(returning: answer) }
        }
        var mtu: UInt16 { state.withLock { $0.mtu } }
        var mtuIsNegotiatedBelow: Bool { false }
        /// It only records: the server answers stored reads on the fuzzing thread, as over L2CAP.
        var sendNeverWaits: Bool { true }
        func mtuExchanged(_ mtu: UInt16) { state.withLock { $0.mtu = mtu } }
        func close(reason: ATTBearerError) { state.withLock { $0.closed = true } }

        func deliver(_ pdu: [UInt8]) { state.withLock { $0.receive }?(pdu) }
        var sentCount: Int { state.withLock { $0.sent.count } }

        /// The `count`th PDU sent, once it is. The conversation waits in a task, so the
        /// server's drain task runs on the thread it frees instead of waking another:
        /// a thread hand-off per request was most of this target's time.
        func sent(_ count: Int) async -> [UInt8] {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [UInt8]? in
                    if state.sent.count >= count { return state.sent[count - 1] }
                    state.waiter = (count, continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// An input's whole conversation: a request left unanswered is a finding (a client
    /// would wait 30 s, then drop the link), caught by this deadline.
    @Sendable static func server(_ bytes: [UInt8]) {
        let finished = DispatchSemaphore(value: 0)
        Task {
            await converse(bytes)
            finished.signal()
        }
        expect(finished.wait(timeout: .now() + 8) == .success, "a request left unanswered (the input's conversation took over 8 s)")
    }

    static func converse(_ bytes: [UInt8]) async {
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
            let answer = await bearer.sent(before + 1)
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
