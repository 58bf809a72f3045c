import ANCS
import ATT
import BluetoothCore
import GATT

/// Runs one link's ``ANCSSession``: feeds it what the phone notifies, the answers to its
/// Control Point writes and its deadline, and carries out its outputs.
///
/// Inputs arrive on the bearer's thread (notifications), from write tasks and from the
/// timer thread; the session handles each under one lock and its outputs are carried out
/// under it too (handing an event to the listeners, starting a write task, arming the
/// timer: nothing that blocks), so events leave in the order the session made them. No
/// queue between the phone and the session: the session's own bounds are the only ones.
final class SessionDriver: Sendable {
    private struct State: Sendable {
        var session: ANCSSession
        var timer: DeadlineTimer.Token?
        var armedFor: UInt64?
    }

    private let state: Lock<State>
    private let gatt: GATTClient
    private let controlPoint: UInt16
    private let emit: @Sendable (ANCSSessionOutput) -> Void

    init(session: ANCSSession, gatt: GATTClient, controlPoint: UInt16, emit: @escaping @Sendable (ANCSSessionOutput) -> Void) {
        state = Lock(State(session: session))
        self.gatt = gatt
        self.controlPoint = controlPoint
        self.emit = emit
    }

    /// The app names the session learned, for the next link's session.
    var appNames: AppNameCache { state.withLock { $0.session.appNames } }
    var counters: ANCSCounters { state.withLock { $0.session.counters } }

    func feed(_ input: ANCSSessionInput) {
        state.withLock { state in
            let outputs = state.session.handle(input, now: MonotonicClock.nanoseconds())
            for output in outputs {
                if case let .writeControlPoint(value) = output { write(value) } else { emit(output) }
            }
            rearm(&state)
        }
    }

    /// One timer, armed for the session's deadline whenever it changes.
    private func rearm(_ state: inout State) {
        let deadline = state.session.nextDeadline
        guard deadline != state.armedFor else { return }
        if let timer = state.timer { DeadlineTimer.shared.cancel(timer) }
        state.timer = nil
        state.armedFor = deadline
        guard let deadline else { return }
        let now = MonotonicClock.nanoseconds()
        let wait = Duration.nanoseconds(Int64(clamping: deadline > now ? deadline - now : 0))
        state.timer = DeadlineTimer.shared.schedule(after: wait) { [weak self] in self?.deadlinePassed() }
    }

    private func deadlinePassed() {
        state.withLock { $0.armedFor = nil; $0.timer = nil }
        feed(.tick)
    }

    /// A Write Request, or prepared writes when the command is longer than ATT_MTU - 3 (a
    /// long bundle identifier at the minimum MTU).
    private func write(_ value: [UInt8]) {
        let gatt = gatt
        let handle = controlPoint
        Task { [weak self] in
            do throws(GATTError) {
                try await gatt.writeValue(handle, value: value)
                self?.feed(.controlPointWriteResult(attErrorCode: nil))
            } catch {
                if let code = error.errorCode {
                    self?.feed(.controlPointWriteResult(attErrorCode: code.rawValue))
                } else {
                    self?.feed(.controlPointWriteFailed(reason: "\(error)"))
                }
            }
        }
    }

    /// The link ended: everything waiting is told, the timer disarmed.
    func end() {
        feed(.disconnected)
        state.withLock { state in
            if let timer = state.timer { DeadlineTimer.shared.cancel(timer) }
            state.timer = nil
        }
    }
}
