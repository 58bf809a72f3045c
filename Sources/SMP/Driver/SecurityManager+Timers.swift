// The SMP timer and the pairing deadline of a SecurityManager. The machine says when they
// start, restart and stop (PairingMachine.timed); these run them, always under the
// manager's lock, so the order the machine gave cannot be swapped by two threads.

extension SecurityManager {
    enum TimerKind: Sendable, Hashable {
        case smp, deadline
    }

    struct ArmedTimer: Sendable {
        let id: UInt64
        let task: Task<Void, Never>
    }

    /// (Re)starts one timer; a replaced or stopped run never fires (its id is gone).
    func arm(_ kind: TimerKind, _ state: inout State) {
        let delay = kind == .smp ? smpTimeout : pairingDeadline
        let id = state.nextTimer
        state.nextTimer += 1
        let task = Task { [weak self] in
            do { try await Task.sleep(for: delay) } catch { return }
            self?.timerFired(kind, id: id)
        }
        state.timers.updateValue(ArmedTimer(id: id, task: task), forKey: kind)?.task.cancel()
    }

    static func stopTimers(_ state: inout State) {
        for timer in state.timers.values { timer.task.cancel() }
        state.timers = [:]
    }

    private func timerFired(_ kind: TimerKind, id: UInt64) {
        let actions = state.withLock { state -> [PairingAction] in
            guard state.timers[kind]?.id == id else { return [] }
            state.timers[kind] = nil
            return queued(state.machine.handle(kind == .smp ? .timerExpired : .deadlineExpired(after: pairingDeadline)), &state)
        }
        execute(actions)
    }
}
