@testable import ATT
import BluetoothCore
import Dispatch
import Glibc

/// A bearer whose `send` may wait, as the kernel's socket holds writes while it pairs:
/// while held, every send waits until the test releases it (60 s at most). PDUs injected
/// arrive on the bearer's own thread, in order.
final class SlowSendBearer: ATTBearer {
    private let reader = DispatchQueue(label: "slow-send-reader")
    private let state: Lock<(receive: (@Sendable ([UInt8]) -> Void)?, sent: [[UInt8]], held: Bool, waiting: Int, fromTasks: Int)>

    init(held: Bool = true) { state = Lock((nil, [], held, 0, 0)) }

    func start(
        receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
        closed _: @escaping @Sendable (ATTBearerError) -> Void
    ) {
        state.withLock { $0.receive = receive }
    }

    func send(_ pdu: [UInt8]) throws(ATTBearerError) {
        // A task running this send holds a thread of the tasks' pool while it waits.
        let fromTask = withUnsafeCurrentTask { $0 != nil }
        state.withLock {
            $0.waiting += 1
            if fromTask { $0.fromTasks += 1 }
        }
        for _ in 0..<6000 where state.withLock({ $0.held }) { usleep(10_000) }
        state.withLock {
            $0.waiting -= 1
            $0.sent.append(pdu)
        }
    }

    func hold() { state.withLock { $0.held = true } }
    func release() { state.withLock { $0.held = false } }

    var sent: [[UInt8]] { state.withLock { $0.sent } }
    /// Sends inside `send`, held.
    var waiting: Int { state.withLock { $0.waiting } }
    /// Sends made by a task (on a thread of the tasks' pool).
    var sendsFromTasks: Int { state.withLock { $0.fromTasks } }
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
