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
            await store.read(attribute, context: ATTServerContext(bearer: 1))
        }
        #expect(read == .failure(.unlikelyError))
        let written = try await withDeadline("the write", seconds: 30) {
            await store.write(attribute, value: [1], kind: .request, context: ATTServerContext(bearer: 1))
        }
        #expect(written == .unlikelyError)
        #expect(store.handlerDeadlinesMissed == 2)
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
            await store.authorize(attribute, operation: .read, context: ATTServerContext(bearer: 1))
        }
        #expect(decision == .insufficientAuthorization)
        #expect(store.handlerDeadlinesMissed == 1)
    }
}
