import ATT
import BluetoothCore
import Dispatch

/// A fake ATT bearer that plays the server's side of a scripted conversation, in the
/// manner of BlueZ's unit/test-gatt.c: each step is a PDU the client must send and the
/// PDUs the server answers with. Answers arrive on a serial queue, as a real bearer's
/// reader thread delivers them (never inside `send`).
///
/// It also checks the one rule the client must keep on its own: no request goes out while
/// another is unanswered.
public final class ScriptedBearer: ATTBearer {
    public struct Step: Sendable {
        public let expect: [UInt8]
        public let replies: [[UInt8]]
        /// When true the replies wait for ``release()``.
        public let held: Bool

        public init(expect: [UInt8], replies: [[UInt8]], held: Bool) {
            self.expect = expect
            self.replies = replies
            self.held = held
        }
    }

    private let queue = DispatchQueue(label: "scripted-att-bearer")
    private let state: Lock<State>

    private struct State {
        var receive: (@Sendable ([UInt8]) -> Void)?
        var closed: (@Sendable (ATTBearerError) -> Void)?
        var script: [Step]
        var heldReplies: [[UInt8]]?
        public var sent: [[UInt8]] = []
        public var failures: [String] = []
        var mtu: UInt16
        var mtuIsNegotiatedBelow: Bool
        public var closedWith: ATTBearerError?
        var outstandingRequest: ATTOpcode?
        var sentWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var unscripted: Set<ATTOpcode>
    }

    /// `unscripted` opcodes are recorded in ``sent`` but not matched against the script:
    /// for PDUs whose order against the client's requests is not fixed (confirmations of
    /// a burst of indications sent while a procedure runs).
    public init(_ script: [Step] = [], mtu: UInt16 = 23, mtuIsNegotiatedBelow: Bool = false, unscripted: Set<ATTOpcode> = []) {
        _ = TestLogging.quiet
        state = Lock(State(script: script, mtu: mtu, mtuIsNegotiatedBelow: mtuIsNegotiatedBelow, unscripted: unscripted))
    }

    // MARK: ATTBearer

    public func start(
        receive: @escaping @Sendable ([UInt8]) -> Void, oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
        closed: @escaping @Sendable (ATTBearerError) -> Void
    ) {
        state.withLock {
            $0.receive = receive
            $0.closed = closed
        }
    }

    public func send(_ pdu: [UInt8]) throws(ATTBearerError) {
        let outcome: (replies: [[UInt8]], waiters: [CheckedContinuation<Void, Never>], error: ATTBearerError?) = state.withLock { state in
            if let reason = state.closedWith { return ([], [], reason) }
            state.sent.append(pdu)
            let opcode = ATTOpcode(rawValue: pdu.first ?? 0)
            if opcode.kind == .request {
                if let outstanding = state.outstandingRequest {
                    state.failures.append("\(opcode.name) sent while \(outstanding.name) was unanswered")
                }
                state.outstandingRequest = opcode
            }
            var replies: [[UInt8]] = []
            if !state.unscripted.contains(opcode) {
                if state.script.isEmpty {
                    state.failures.append("unscripted PDU \(Hex.string(pdu, separator: " "))")
                } else if state.script[0].expect != pdu {
                    state.failures.append("expected \(Hex.string(state.script[0].expect, separator: " ")), client sent \(Hex.string(pdu, separator: " "))")
                } else {
                    let step = state.script.removeFirst()
                    if step.held { state.heldReplies = step.replies } else { replies = step.replies }
                }
            }
            let count = state.sent.count
            let ready = state.sentWaiters.filter { $0.count <= count }.map(\.continuation)
            state.sentWaiters.removeAll { $0.count <= count }
            return (replies, ready, nil)
        }
        if let error = outcome.error { throw error }
        for waiter in outcome.waiters { waiter.resume() }
        if !outcome.replies.isEmpty { inject(outcome.replies) }
    }

    public var mtu: UInt16 { state.withLock { $0.mtu } }
    public var mtuIsNegotiatedBelow: Bool { state.withLock { $0.mtuIsNegotiatedBelow } }
    /// It only records what is sent.
    public var sendNeverWaits: Bool { true }
    public func mtuExchanged(_ mtu: UInt16) { state.withLock { $0.mtu = mtu } }

    public func close(reason: ATTBearerError) {
        state.withLock { state in
            if state.closedWith == nil { state.closedWith = reason }
        }
    }

    // MARK: Driving the conversation

    /// Delivers PDUs to the client as if the server had sent them.
    public func inject(_ pdus: [[UInt8]]) {
        queue.async { [self] in
            for pdu in pdus {
                let receive: (@Sendable ([UInt8]) -> Void)? = state.withLock { state in
                    if ATTOpcode(rawValue: pdu.first ?? 0).kind == .response { state.outstandingRequest = nil }
                    return state.receive
                }
                receive?(pdu)
            }
        }
    }

    public func inject(_ hex: String) { inject([Hex.bytes(hex)!]) }

    /// Sends the replies of the held step.
    public func release() {
        let replies = state.withLock { state in
            defer { state.heldReplies = nil }
            return state.heldReplies ?? []
        }
        inject(replies)
    }

    /// The link goes down under the client.
    public func disconnect(_ reason: ATTBearerError) {
        queue.async { [self] in
            let closed = state.withLock { state in
                state.closedWith = state.closedWith ?? reason
                return state.closed
            }
            closed?(reason)
        }
    }

    /// Waits until everything injected so far has been delivered.
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    /// Waits until the client has sent `count` PDUs in all. Tests bound it with
    /// ``withDeadline(_:_:)``.
    public func waitForSent(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sent.count >= count { return true }
                state.sentWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public var sent: [[UInt8]] { state.withLock { $0.sent } }
    public var sentHex: [String] { sent.map { Hex.string($0, separator: " ") } }
    public var failures: [String] { state.withLock { $0.failures } }
    public var closedWith: ATTBearerError? { state.withLock { $0.closedWith } }
    public var scriptFinished: Bool { state.withLock { $0.script.isEmpty } }
}

/// A conversation step from hex: the client sends `send`, the server answers `replies`.
public func step(_ send: String, _ replies: String..., held: Bool = false) -> ScriptedBearer.Step {
    ScriptedBearer.Step(expect: Hex.bytes(send)!, replies: replies.map { Hex.bytes($0)! }, held: held)
}

public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing with ``DeadlineExceeded`` if it takes longer than `seconds`:
/// every wait in a test has a deadline, so a broken client fails the test instead of
/// hanging it.
public func withDeadline<T: Sendable>(
    _ what: String, seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    // Not a task group: a group waits for its children on the way out, so a body stuck in a
    // wait that ignores cancellation would turn a missed deadline into a hung test run. The
    // body runs in its own task, cancelled (and left behind) when the deadline wins.
    let race = DeadlineRace<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation, seconds: seconds, what: what, body)
    }
}

/// The first of the body and the timer to finish resumes the caller; the other is cancelled.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let state = Lock<(continuation: CheckedContinuation<T, any Error>?, timer: Task<Void, Never>?, work: Task<Void, Never>?)>((nil, nil, nil))

    func start(
        _ continuation: CheckedContinuation<T, any Error>, seconds: Double, what: String,
        _ body: @escaping @Sendable () async throws -> T
    ) {
        state.withLock { $0.continuation = continuation }
        let work = Task {
            do { self.finish(.success(try await body())) } catch { self.finish(.failure(error)) }
        }
        let timer = Task {
            do { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) } catch { return }
            self.finish(.failure(DeadlineExceeded(what: what)))
        }
        state.withLock {
            $0.work = work
            $0.timer = timer
        }
    }

    private func finish(_ result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        guard let continuation else { return }
        continuation.resume(with: result)
        work?.cancel()
        timer?.cancel()
    }
}
