import ATT
import BluetoothCore
import Dispatch
import GATT
import Testing
import TestSupport

@testable import BareBLE

/// The manager's hooks run on every request a central sends: what one request costs must
/// not depend on how many came before.
@Suite struct PeripheralServerStoreHookTests {
    /// Seen in `bareble-bench server`: reads got slower the longer the link lived (2,300/s,
    /// then 1,200/s), every sample inside nested `ATTServerContext` reabstraction thunks.
    /// A closure kept bare in a `Lock` came back from each `withLock { $0 }` wrapped in two
    /// more thunks (out of and back into the generic value), so each request grew the chain
    /// by two heap objects and walked it: quadratic time, and tens of thousands of requests
    /// deep it overflows the stack.
    @Test func hooksDoNotGrowWithEachRequest() async throws {
        let serving = PeripheralServerStore(store: try GATTServerStore(services: []), report: { _ in })
        let admitted = Lock(0)
        let changed = Lock(0)
        serving.setHooks(clientStateChanged: { _ in changed.withLock { $0 += 1 } }, admitting: { _ in admitted.withLock { $0 += 1 } })
        let context = ATTServerContext(bearer: 0x0040, instance: 1)
        let requests = 200_000
        var refused = 0
        for _ in 0..<requests where serving.admit(.readRequest(.init(attributeHandle: 0x0001)), context: context) != nil {
            refused += 1
        }
        #expect(refused == 0)
        #expect(admitted.withLock { $0 } == requests)
        // Client Supported Features writes call the other hook.
        let features = try #require(serving.attributes(in: 0x0001...0xFFFF, limit: 100).first { $0.type == GATTUUID.clientSupportedFeatures })
        for _ in 0..<requests where await serving.write(features, value: [0x00], kind: .request, context: context) != nil {
            refused += 1
        }
        #expect(refused == 0)
        #expect(changed.withLock { $0 } == requests)
    }

    /// A robust-caching client that becomes change-aware (Database Out Of Sync, then its
    /// next request) is reported once, so a bonded one's saved state records it; before,
    /// the bond kept it change-unaware and it met 0x12 again at every reconnection. The
    /// report (a bond file written and synced) comes after `admit` returned: a read is
    /// admitted on the bearer's thread, which reads the controller for every link; it used
    /// to be told inside `admit` (found by a review).
    @Test func becomingChangeAwareIsReportedOnceAndNotOnTheRequestsThread() async throws {
        let store = try GATTServerStore(services: [])
        let serving = PeripheralServerStore(store: store, report: { _ in })
        let changed = Lock(0)
        let saveMayFinish = DispatchSemaphore(value: 0)
        let blocking = Lock(false)
        let saveWaitedOut = Lock(false)
        serving.setHooks(
            clientStateChanged: { _ in
                if blocking.withLock({ $0 }), saveMayFinish.wait(timeout: .now() + 5) == .timedOut { saveWaitedOut.withLock { $0 = true } }
                changed.withLock { $0 += 1 }
            },
            admitting: { _ in })
        let context = ATTServerContext(bearer: 0x0040, instance: 1)
        let features = try #require(serving.attributes(in: 0x0001...0xFFFF, limit: 100).first { $0.type == GATTUUID.clientSupportedFeatures })
        #expect(await serving.write(features, value: [0x01], kind: .request, context: context) == nil)
        #expect(changed.withLock { $0 } == 1)
        _ = try store.addServices([GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x181C)))])
        let read = ATTPDU.readRequest(.init(attributeHandle: 0x0001))
        #expect(serving.admit(read, context: context) == .databaseOutOfSync)
        #expect(changed.withLock { $0 } == 1)
        blocking.withLock { $0 = true }
        #expect(serving.admit(read, context: context) == nil)
        saveMayFinish.signal()
        try await withDeadline("the save") {
            while changed.withLock({ $0 }) < 2 { try? await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(!saveWaitedOut.withLock { $0 })
        #expect(changed.withLock { $0 } == 2)
        #expect(store.bondedState(bearer: 0x0040).wasChangeAware)
        #expect(serving.admit(read, context: context) == nil)
        #expect(changed.withLock { $0 } == 2)
    }
}
