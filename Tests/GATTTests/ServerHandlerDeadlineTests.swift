import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// An application handler that never answers must not hold the client's request until the
/// client's 30 s transaction timeout kills the link: the store answers Unlikely Error (0x0E)
/// at its deadline and counts it.
@Suite struct ServerHandlerDeadlineTests {
    /// Holds every caller until opened (at the end of the test), ignoring cancellation as
    /// a stuck application would.
    final class Gate: Sendable {
        private let waiting = Lock<[CheckedContinuation<Void, Never>]>([])

        func wait() async {
            await withCheckedContinuation { continuation in waiting.withLock { $0.append(continuation) } }
        }

        func open() {
            for continuation in waiting.withLock({ state in defer { state = [] }; return state }) { continuation.resume() }
        }
    }

    static func stuckHandler(_ gate: Gate) -> GATTAttributeHandler {
        GATTAttributeHandler(
            read: { _ throws(ATTErrorCode) in
                await gate.wait()
                return [1]
            },
            write: { _, _ throws(ATTErrorCode) in await gate.wait() }
        )
    }

    @Test func aHandlerThatNeverAnswersIsCutOffAtTheDeadline() async throws {
        let gate = Gate()
        defer { gate.open() }
        let store = try GATTServerStore(
            services: [GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0xFFF3)), properties: [.read, .write], handler: Self.stuckHandler(gate)),
            ])],
            configuration: GATTServerConfiguration(handlerDeadline: .milliseconds(200))
        )
        let attribute = try #require(store.attributes(in: 0x0001...0xFFFF, limit: 100).first { $0.type == BluetoothUUID(UInt16(0xFFF3)) })
        let read = try await withDeadline("the read", seconds: 30) {
            await store.read(attribute, context: ATTServerContext(bearer: 1, instance: 1))
        }
        #expect(read == .failure(.unlikelyError))
        let written = try await withDeadline("the write", seconds: 30) {
            await store.write(attribute, value: [1], kind: .request, context: ATTServerContext(bearer: 1, instance: 1))
        }
        #expect(written == .unlikelyError)
        #expect(store.handlerDeadlinesMissed == 2)
    }

    /// Counts the calls of a handler that never answers (as `stuckHandler`).
    final class CountingGate: Sendable {
        let gate = Gate()
        private let count = Lock(0)
        var calls: Int { count.withLock { $0 } }

        var handler: GATTAttributeHandler {
            GATTAttributeHandler(
                read: { _ throws(ATTErrorCode) in
                    self.count.withLock { $0 += 1 }
                    await self.gate.wait()
                    return [1]
                },
                write: { _, _ throws(ATTErrorCode) in
                    self.count.withLock { $0 += 1 }
                    await self.gate.wait()
                })
        }
    }

    static func store(_ handler: GATTAttributeHandler, deadline: Duration) throws -> (GATTServerStore, ATTAttribute) {
        let store = try GATTServerStore(
            services: [GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
                GATTDatabase.Characteristic(uuid: BluetoothUUID(UInt16(0xFFF3)), properties: [.read, .write], handler: handler),
            ])],
            configuration: GATTServerConfiguration(handlerDeadline: deadline))
        let attribute = try #require(store.attributes(in: 0x0001...0xFFFF, limit: 100).first { $0.type == BluetoothUUID(UInt16(0xFFF3)) })
        return (store, attribute)
    }

    /// A Read Multiple naming one slow handler eight times (each answers within its own
    /// deadline): the handlers share the request's deadline, so the client is answered
    /// Unlikely Error once it passes, not after eight slow answers (at 517 octets a
    /// request can name one 258 times: 43 minutes at just under 10 s each, where the
    /// client drops the link after 30 s).
    @Test func aRequestsHandlersShareTheRequestsDeadline() async throws {
        let calls = Lock(0)
        let slow = GATTAttributeHandler(read: { _ throws(ATTErrorCode) in
            calls.withLock { $0 += 1 }
            try? await Task.sleep(for: .milliseconds(150))
            return [1]
        })
        let (store, attribute) = try Self.store(slow, deadline: .seconds(60))
        var configuration = ATTServer.Configuration()
        configuration.requestDeadline = .milliseconds(500)
        let bearer = ScriptedBearer([], mtu: 23, unscripted: Set((0...255).map { ATTOpcode(rawValue: UInt8($0)) }))
        let server = ATTServer(bearer: bearer, store: store, bearerID: 1, configuration: configuration)
        let client = ATTClient(bearer: bearer, server: server)
        defer { client.close() }
        let handle = [UInt8(attribute.handle & 0xFF), UInt8(attribute.handle >> 8)]
        bearer.inject(Hex.string([0x0E] + Array([[UInt8]](repeating: handle, count: 8).joined()), separator: " "))
        try await withDeadline("the Read Multiple's answer", seconds: 30) { await bearer.waitForSent(1) }
        #expect(bearer.sent.first == [0x01, 0x0E] + handle + [0x0E])
        #expect(calls.withLock { $0 } < 8)
    }

    /// A request still running when its bearer closed calls no handler any more: the
    /// application is not asked for a central that is gone.
    @Test func aClosedBearersRequestCallsNoHandler() async throws {
        let stuck = CountingGate()
        defer { stuck.gate.open() }
        let (store, attribute) = try Self.store(stuck.handler, deadline: .seconds(60))
        let context = ATTServerContext(bearer: 1, instance: 1)
        store.bearerClosed(context)
        #expect(await store.read(attribute, context: context) == .failure(.unlikelyError))
        #expect(await store.write(attribute, value: [1], kind: .request, context: context) == .unlikelyError)
        #expect(stuck.calls == 0 && store.handlerDeadlinesMissed == 0)
    }

    /// An authorizer that never decides denies at the deadline.
    @Test func anAuthorizerThatNeverDecidesDenies() async throws {
        let gate = Gate()
        defer { gate.open() }
        let store = try GATTServerStore(
            services: [], configuration: GATTServerConfiguration(handlerDeadline: .milliseconds(200)),
            authorizer: { _, _, _ in
                await gate.wait()
                return nil
            }
        )
        let attribute = try #require(store.attribute(at: 0x0003))
        let decision = try await withDeadline("the authorization", seconds: 30) {
            await store.authorize(attribute, operation: .read, context: ATTServerContext(bearer: 1, instance: 1))
        }
        #expect(decision == .insufficientAuthorization)
        #expect(store.handlerDeadlinesMissed == 1)
    }
}
