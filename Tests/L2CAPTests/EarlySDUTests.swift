import BluetoothCore
import Dispatch
import HCI
@testable import L2CAP
import Testing
import TestSupport

/// SDUs that come before a channel's first handler are kept and handed over when it is set;
/// what arrives while they are being handed over queues behind them. A peer decides how
/// much that is, so the queue has a bound.
@Suite struct EarlySDUTests {
    static let handle: UInt16 = 0x40

    /// Runs `body` on a dispatch thread (it may block) and returns once it has finished.
    static func onThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                body()
                continuation.resume()
            }
        }
    }

    @Test func aPeerFloodingWhileEarlySDUsAreHandedOverIsBoundedAndCounted() async throws {
        let harness = try await L2CAPHarness.make(returnsCreditsAtOnce: true)
        await harness.connect(Self.handle)
        await harness.receive([0x00], cid: .attributeProtocol, handle: Self.handle)
        // The handler blocks inside the hand-over of that first SDU until the flood is in.
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let received = Lock<[[UInt8]]>([])
        let handOver = Task {
            await Self.onThread {
                _ = try? harness.manager.setHandler({ event in
                    guard case let .received(sdu) = event else { return }
                    let first = received.withLock { $0.append(sdu); return $0.count == 1 }
                    if first {
                        entered.signal()
                        gate.wait()
                    }
                }, channel: .attributeProtocol, connection: Self.handle)
            }
        }
        await Self.onThread { entered.wait() }
        let flood = 1_000
        await harness.inject((1...flood).map { index in
            ACLDataPacket(connectionHandle: Self.handle, packetBoundary: .firstFlushable,
                          data: BasicFrame(channelID: .attributeProtocol, payload: [UInt8(index & 0xFF), UInt8(index >> 8)]).encode())
        })
        gate.signal()
        await handOver.value
        let kept = ConnectionState.maximumHandOverBacklog
        let all = received.withLock { $0 }
        #expect(all.count == 1 + kept)
        // Oldest first, the air's order: the backlog keeps the first arrivals.
        #expect(all.last == [UInt8(kept & 0xFF), UInt8(kept >> 8)])
        #expect(harness.manager.statistics.handOverBacklogDrops == flood - kept)
    }
}
