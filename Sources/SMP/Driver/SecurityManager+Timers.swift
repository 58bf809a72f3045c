import BluetoothCore

// The SMP timer and the pairing deadline of a SecurityManager. The machine says when they
// start, restart and stop (PairingMachine.timed); these run them, always under the
// manager's lock, so the order the machine gave cannot be swapped by two threads. They are
// timers, not waits (nobody is suspended on them), so they are entries of DeadlineTimer:
// a restart forgets the previous run at once, where a sleeping task per restart held its
// memory until its 30 s were up.

extension SecurityManager {
    enum TimerKind: Sendable, Hashable {
        case smp, deadline
    }

    struct ArmedTimer: Sendable {
        /// Tells a run that was already firing when it was replaced from the current one.
        let id: UInt64
        let token: DeadlineTimer.Token
    }

    /// (Re)starts one timer; a replaced or stopped run never fires (its id is gone).
    func arm(_ kind: TimerKind, _ state: inout State) {
        let delay = kind == .smp ? smpTimeout : pairingDeadline
        let id = state.nextTimer
        state.nextTimer += 1
        let token = DeadlineTimer.shared.schedule(after: delay) { [weak self] in self?.timerFired(kind, id: id) }
        if let replaced = state.timers.updateValue(ArmedTimer(id: id, token: token), forKey: kind) {
            DeadlineTimer.shared.cancel(replaced.token)
        }
    }

    static func stopTimers(_ state: inout State) {
        for timer in state.timers.values { DeadlineTimer.shared.cancel(timer.token) }
        state.timers = [:]
    }

    private func timerFired(_ kind: TimerKind, id: UInt64) {
        var fired = false
        let actions = state.withLock { state -> [PairingAction] in
            guard state.timers[kind]?.id == id else { return [] }
            state.timers[kind] = nil
            fired = true
            return queued(state.machine.handle(kind == .smp ? .timerExpired : .deadlineExpired(after: pairingDeadline)), &state)
        }
        if fired {
            logger.warning(
                kind == .smp ? "SMP timer expired" : "pairing deadline passed",
                metadata: ["peer": "\(connection.peer)", "after": "\(kind == .smp ? smpTimeout : pairingDeadline)"])
        }
        execute(actions)
    }
}
