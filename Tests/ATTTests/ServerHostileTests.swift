@testable import ATT
import BluetoothCore
import HCI
@testable import L2CAP
import Testing
import TestSupport

/// A hostile client against the server. The bounds these tests hold the server to:
/// - inbox: one request (a second before the first is answered closes the bearer) plus 64
///   commands; past that a command is dropped and counted;
/// - prepare queue: 32 entries and 4,096 value octets per bearer, Prepare Queue Full past it;
/// - answers the peer does not read: L2CAP's answer bound (32), the rest dropped and counted;
/// - notifications the controller does not take: L2CAP's host bound, then back-pressure.
@Suite struct ServerHostileTests {
    static let signature = "01 00 00 00 11 22 33 44 55 66 77 5A"

    /// A fresh server per opcode, so each meets lengths past the ATT_MTU of 23 (an Exchange
    /// MTU among the lengths may raise it for the rest of its opcode).
    @Test func everyOpcodeWithEveryLengthGetsExactlyTheAnswerItMay() async throws {
        for byte in 0...255 {
            let opcode = ATTOpcode(rawValue: UInt8(byte))
            // The client's own PDUs (responses, notifications, indications) are its tests'.
            if [.response, .notification, .indication].contains(opcode.kind) { continue }
            let fixture = ServerFixture()
            var commands = 0
            for length in 0...24 {
                let pdu = [UInt8(byte)] + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) }
                let isRequest = opcode.kind == .request || opcode.kind == nil
                let invalid = pdu.count > Int(fixture.bearer.mtu) || (try? ATTPDU(decoding: pdu)) == nil
                let before = fixture.bearer.sent.count
                fixture.bearer.inject([pdu])
                guard isRequest else {
                    if opcode.isCommand { commands += 1 }
                    continue
                }
                let bearer = fixture.bearer
                try await withDeadline("an answer to \(Hex.string(pdu, separator: " "))", seconds: 10) {
                    await bearer.waitForSent(before + 1)
                }
                let answer = fixture.bearer.sent[before]
                let trace = "\(Hex.string(pdu, separator: " ")) → \(Hex.string(answer, separator: " "))"
                if invalid {
                    #expect(answer == [0x01, UInt8(byte), 0x00, 0x00, 0x04], "\(trace)")
                } else if opcode.kind == nil {
                    #expect(answer == [0x01, UInt8(byte), 0x00, 0x00, 0x06], "\(trace)")
                } else {
                    let isItsAnswer = answer.first == opcode.responseOpcode?.rawValue
                        || (answer.count == 5 && answer[0] == 0x01 && answer[1] == UInt8(byte))
                    #expect(isItsAnswer, "\(trace)")
                }
            }
            // The commands got nothing back, and every one is accounted for.
            try await fixture.sendUnanswered([])
            let statistics = fixture.server.statistics
            #expect(fixture.bearer.closedWith == nil)
            #expect(statistics.protocolViolations == 0)
            #expect(statistics.commandsReceived == commands, "opcode \(opcode)")
        }
    }

    @Test func handleZeroIsAnInvalidHandleEverywhere() async throws {
        let fixture = ServerFixture()
        // Even a store that (wrongly) holds an attribute at 0x0000 does not serve it.
        fixture.store.add(ATTAttribute(handle: 0, type: BluetoothUUID(UInt16(0x2A00)), permissions: .readWrite), value: [1])
        try await fixture.converse([
            ("04 00 00 00 00", "01 04 00 00 01"),
            ("06 00 00 FF FF 00 28 00 18", "01 06 00 00 01"),
            ("08 00 00 FF FF 00 2A", "01 08 00 00 01"),
            ("10 00 00 FF FF 00 28", "01 10 00 00 01"),
            ("0A 00 00", "01 0A 00 00 01"),
            ("0C 00 00 00 00", "01 0C 00 00 01"),
            ("0E 03 00 00 00", "01 0E 00 00 01"),
            ("20 00 00 03 00", "01 20 00 00 01"),
            ("12 00 00 01", "01 12 00 00 01"),
            ("16 00 00 00 00 01", "01 16 00 00 01"),
        ])
        try await fixture.sendUnanswered(["52 00 00 01", "D2 00 00 01 \(Self.signature)"])
        #expect(fixture.store.writes.isEmpty)
    }

    @Test func oneBearerFillingItsPrepareQueueDoesNotStarveAnother() async throws {
        let store = InMemoryAttributeStore.testDatabase()
        let greedy = ServerFixture(store: store, bearerID: 0x0040)
        let other = ServerFixture(store: store, bearerID: 0x0041)
        var prepares: [(request: String, response: String)] = []
        for index in 0..<32 {
            let part = "16 08 00 00 00 \(sequenceHex(18, from: index))"
            prepares.append((part, "17" + part.dropFirst(2)))
        }
        try await greedy.converse(prepares + [("16 08 00 00 00 01", "01 16 08 00 09")])
        try await other.converse([
            ("16 05 00 00 00 AB CD", "17 05 00 00 00 AB CD"),
            ("18 01", "19"),
        ])
        #expect(store.value(at: 0x0005) == [0xAB, 0xCD])
        // The greedy client's own queue still executes, and is empty after.
        try await greedy.converse([("18 01", "19"), ("16 08 00 00 00 01", "17 08 00 00 00 01")])
        #expect(store.writes.map(\.bearer) == [0x0041, 0x0040])
    }

    @Test func pipelinedRequestsCloseTheBearerAndTheInboxStaysAtOneRequest() async throws {
        let fixture = ServerFixture()
        fixture.store.holdReads()
        let flood = Array(repeating: Hex.bytes("0A 03 00")!, count: 10_000)
        fixture.bearer.inject(flood)
        let store = fixture.store
        // The second request closes the bearer on the reader thread, so once the flood has
        // been delivered the verdict is in (the first read may not have started).
        await fixture.bearer.drain()
        store.releaseReads()
        let violation = ATTBearerError.protocolViolation(request: .readRequest, received: .readRequest)
        let statistics = fixture.server.statistics
        #expect(statistics.inboxHighWater <= 1 + ATTServer.Configuration().commandInboxLimit)
        #expect(statistics.protocolViolations == 1)
        #expect(fixture.server.closedReason == violation)
        #expect(fixture.bearer.closedWith == violation)
        #expect(fixture.client.closedReason == violation)
        #expect(store.closedBearers == [0x0040])
        #expect(violation.description.hasPrefix("the peer sent Read Request while its Read Request was still unanswered"), "\(violation)")
    }

    @Test func aCommandFloodBehindAnOutstandingRequestIsBoundedAndCounted() async throws {
        let fixture = ServerFixture()
        fixture.store.holdReads()
        fixture.bearer.inject("0A 03 00")
        let store = fixture.store
        try await withDeadline("the read to reach the store") { await store.waitForHeldReads(1) }
        fixture.bearer.inject(Array(repeating: Hex.bytes("52 05 00 01 02")!, count: 10_000))
        await fixture.bearer.drain()
        store.releaseReads()
        let bearer = fixture.bearer
        try await withDeadline("the read's answer") { await bearer.waitForSent(1) }
        try await fixture.sendUnanswered([])
        let statistics = fixture.server.statistics
        #expect(statistics.inboxHighWater == 64)
        #expect(statistics.commandsPerformed == 64)
        #expect(statistics.commandsDroppedForFullInbox == 10_000 - 64)
        #expect(fixture.bearer.closedWith == nil)
    }

    /// The peer asks again as soon as each answer is handed to L2CAP, and never lets the
    /// controller take one (no credits come back): answers pile up only to L2CAP's bound.
    @Test func requestsWhoseAnswersAreNeverReadCostNoMoreThanL2CAPsAnswerBound() async throws {
        let handle: UInt16 = 0x0040
        let harness = try await L2CAPHarness.make(aclCount: 1, configuration: .init(outgoingLimit: OutgoingLimit(answers: 32)))
        await harness.connect(handle)
        let bearer = L2CAPBearer(manager: harness.manager, connection: handle)
        let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: handle)
        let client = ATTClient(bearer: bearer, server: server)
        let answered = CountWatcher(server.observeAnswers)
        let requests = 1_000
        for index in 1...requests {
            await harness.receive([0x0A, 0x03, 0x00], cid: .attributeProtocol, handle: handle)
            try await withDeadline("answer \(index)") { await answered.wait(for: index) }
        }
        #expect(server.closedReason == nil)
        #expect(client.closedReason == nil)
        #expect(server.statistics.requestsAnswered == requests)
        // One answer is in the controller's only buffer, 32 wait, the rest were dropped.
        #expect(harness.manager.statistics.answersDroppedForFullQueue == requests - 1 - 32)
    }

    /// A controller reuses a connection handle as soon as its link is gone: the next
    /// server on it tells its store so by a larger instance, which is how a store keeps a
    /// closed link's late requests off the next link's state.
    @Test func aServerOnAReusedHandleTakesALargerInstance() {
        let first = ServerFixture(bearerID: 0x0040)
        first.client.close()
        let second = ServerFixture(bearerID: 0x0040)
        #expect(second.server.context.bearer == first.server.context.bearer)
        #expect(second.server.context.instance > first.server.context.instance)
        #expect(first.server.context.instance > 0)
    }

    @Test func notificationsMeetingL2CAPsBoundGetBackPressureAndTheBearerStays() async throws {
        let handle: UInt16 = 0x0040
        let limit = OutgoingLimit(hostPDUs: 8, hostBytes: 10_000, answers: 2)
        let harness = try await L2CAPHarness.make(aclCount: 1, configuration: .init(outgoingLimit: limit))
        await harness.connect(handle)
        let bearer = L2CAPBearer(manager: harness.manager, connection: handle)
        let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: handle)
        let client = ATTClient(bearer: bearer, server: server)
        try server.notify(handle: 0x0003, value: [0])
        _ = try await harness.log.nextACL()  // in the controller's only buffer
        for index in 1...8 { try server.notify(handle: 0x0003, value: [UInt8(index)]) }
        #expect(throws: ATTServerError.outgoingQueueFull) { try server.notify(handle: 0x0003, value: [9]) }
        #expect(server.closedReason == nil)
        #expect(client.closedReason == nil)
        await harness.complete(handle)
        _ = try await harness.log.nextACL()
        try server.notify(handle: 0x0003, value: [10])
    }
}
