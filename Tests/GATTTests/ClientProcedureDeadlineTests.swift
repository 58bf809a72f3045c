import ATT
import BluetoothCore
import Dispatch
import GATT
import Testing
import TestSupport

/// A server that answers each request well inside ATT's 30 s but never lets a procedure
/// end (specs/gatt-client.md, "Deadlines"): every procedure of more than one request ends by
/// the client's `procedureTimeout` as a whole, and the bearer stays usable after it.
@Suite struct ClientProcedureDeadlineTests {
    /// Answers every request after `delay` with what `answer` makes of it.
    final class SlowServer: ATTBearer {
        let delay: Double
        let answer: @Sendable ([UInt8]) -> [UInt8]
        private let state = Lock<(receive: (@Sendable ([UInt8]) -> Void)?, requests: Int, sent: [[UInt8]])>((nil, 0, []))

        init(delay: Double, answer: @escaping @Sendable ([UInt8]) -> [UInt8]) {
            self.delay = delay
            self.answer = answer
        }

        var requests: Int { state.withLock { $0.requests } }
        var sent: [[UInt8]] { state.withLock { $0.sent } }

        func start(
            receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
            closed _: @escaping @Sendable (ATTBearerError) -> Void
        ) {
            state.withLock { $0.receive = receive }
        }

        func send(_ pdu: [UInt8]) throws(ATTBearerError) {
            let receive = state.withLock { state in
                state.requests += 1
                state.sent.append(pdu)
                return state.receive
            }
            let reply = answer(pdu)
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { receive?(reply) }
        }

        var mtu: UInt16 { 23 }
        var mtuIsNegotiatedBelow: Bool { false }
        var sendNeverWaits: Bool { true }
        func mtuExchanged(_: UInt16) {}
        func close(reason _: ATTBearerError) {}
    }

    /// One service per answer, each one handle long, from wherever the client asks: a
    /// chain that advances by one handle per request, 65,535 of them. Reads answer 0x42.
    static func endlessServices(_ pdu: [UInt8]) -> [UInt8] {
        switch pdu.first {
        case 0x10: [0x11, 0x06, pdu[1], pdu[2], pdu[1], pdu[2], 0x00, 0x18]
        case 0x0A: [0x0B, 0x42]
        default: [0x01, pdu.first ?? 0, 0x00, 0x00, 0x06]
        }
    }

    func timedOut(_ error: GATTError?, _ procedure: String) -> Bool {
        guard case let .procedureTimedOut(name, after) = error else { return false }
        return name == procedure && after == .seconds(1)
    }

    @Test func anEndlessDiscoveryEndsAtTheProcedureDeadlineAndTheBearerStaysUsable() async throws {
        let server = SlowServer(delay: 0.02, answer: Self.endlessServices)
        let client = GATTClient(att: ATTClient(bearer: server), procedureTimeout: .seconds(1))
        // Without the procedure's deadline: 65,535 requests of 20 ms, 22 minutes. The test's
        // own deadline is far above the 1 s only for a loaded machine's sake (CI's full run
        // took 16 s here).
        let error = try await withDeadline("discovery", seconds: 120) {
            await gattError { () async throws(GATTError) in try await client.discoverAllPrimaryServices() }
        }
        #expect(timedOut(error, "Discover All Primary Services"), "\(String(describing: error))")
        // The request on the wire when the deadline passed is answered; the next goes after it.
        let value = try await withDeadline("read", seconds: 120) { try await client.readValue(0x0003) }
        #expect(value == [0x42])
        // The whole-database discovery names itself.
        let whole = try await withDeadline("whole discovery", seconds: 120) {
            await gattError { () async throws(GATTError) in try await client.discover() }
        }
        #expect(timedOut(whole, "Discovery of the whole database"), "\(String(describing: whole))")
    }

    @Test func aLongWriteCutByTheDeadlineEmptiesTheServersQueue() async throws {
        // Prepare Writes echoed after 0.3 s each: 200 bytes at ATT_MTU 23 take 11 of them.
        let server = SlowServer(delay: 0.3) { pdu in
            switch pdu.first {
            case 0x16: [0x17] + pdu.dropFirst()
            case 0x18: [0x19]
            default: [0x01, pdu.first ?? 0, 0, 0, 0x06]
            }
        }
        let client = GATTClient(att: ATTClient(bearer: server), procedureTimeout: .seconds(1))
        let error = try await withDeadline("long write", seconds: 120) {
            await gattError { () async throws(GATTError) in try await client.writeLongValue(0x0003, value: [UInt8](repeating: 7, count: 200)) }
        }
        #expect(timedOut(error, "Write Long Characteristic Values"), "\(String(describing: error))")
        // What the server holds is dropped (Execute Write 0x00), or the next long write's
        // Execute Write would commit it with its own.
        try await withDeadline("the cancel") { while !server.sent.contains([0x18, 0x00]) { try await Task.sleep(for: .milliseconds(20)) } }
        #expect(!server.sent.contains([0x18, 0x01]))
    }

    @Test func aLongReadEndsAtTheProcedureDeadline() async throws {
        // A full 22 bytes per piece, 0.3 s each: 24 pieces to the 512-byte maximum.
        let server = SlowServer(delay: 0.3) { pdu in
            pdu.first == 0x0A || pdu.first == 0x0C ? [pdu[0] + 1] + [UInt8](repeating: 0x11, count: 22) : [0x01, pdu[0], 0, 0, 0x06]
        }
        let client = GATTClient(att: ATTClient(bearer: server), procedureTimeout: .seconds(1))
        let error = try await withDeadline("long read", seconds: 120) {
            await gattError { () async throws(GATTError) in try await client.readValue(0x0003) }
        }
        #expect(timedOut(error, "Read Long Characteristic Values at 0x0003"), "\(String(describing: error))")
        #expect(server.requests < 10)
    }
}
