import BluetoothCore
import HCI

// How callers wait for a pairing's end, on the stack's one pending-answer primitive: each
// wait is bounded (the peer must start within the SMP timeout; a running pairing ends by
// its timers) and returns at once when its task is cancelled.

extension SecurityManager {
    /// Who waits for a pairing's end: the caller who asked for it (whose cancellation may
    /// end it) or one who only listens for it.
    package enum PairingWait: Hashable, Sendable {
        case starting, listening
    }

    typealias Resumption = PendingAnswers<PairingWait, PairingKeys, PairingError>.Resumption

    /// Waits for the running (or, with `starting`, a new) pairing to end. Cancelling the
    /// task returns ``PairingError/cancelled`` at once; when `starting` and nobody else
    /// waits, the pairing is ended too (the caller who wanted it gave up).
    func waitForPairing(starting: Bool) async throws(PairingError) -> PairingKeys {
        // Waiting for the peer to start (our Security Request, or nextPairingResult) is
        // bounded by the SMP timeout (Vol 3 Part H 3.4: reset when we queue an SMP PDU);
        // a running pairing by its timers.
        let peerDeadline = connection.role == .peripheral || !starting ? smpTimeout : nil
        let deadline = peerDeadline.map { ContinuousClock.now + $0 }
        let (registered, actions): (Result<UInt64, PairingError>, [PairingAction]) = state.withLock { state in
            if let ended = state.ended { return (.failure(.disconnected(ended)), []) }
            // A caller cancelled before asking starts nothing.
            if Task.isCancelled { return (.failure(.cancelled), []) }
            let id = state.waits.expect(starting ? .starting : .listening)
            let actions = starting && !state.machine.isPairing ? queued(state.machine.handle(.pair), &state) : []
            return (.success(id), actions)
        }
        execute(actions)
        switch await wait(for: try registered.get(), until: deadline) {
        case let .value(keys): return keys
        case let .failed(error): throw error
        case .expired: throw .deadlineExceeded(.peerToStart, after: peerDeadline ?? smpTimeout)
        case .cancelled: throw .cancelled
        }
    }

    /// Every waiter learns `outcome` (the pairing ended, or the link did).
    func resumeWaiters(_ outcome: Result<PairingKeys, PairingError>) {
        let resumptions = state.withLock { state in
            // A pairing its caller cancelled is no news for the next one who asks.
            if state.waits.unansweredCount == 0, outcome != .failure(.cancelled) { state.unclaimed = outcome }
            return state.waits.fulfillAll(with: WaitOutcome(outcome))
        }
        for resumption in resumptions { resumption.resume() }
    }
}

extension SecurityManager: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<PairingWait, PairingKeys, PairingError>) -> Result) -> Result {
        state.withLock { body(&$0.waits) }
    }

    /// The peer did not start a pairing in time. A pairing that did start is left to its
    /// own timers (so the wait is bounded by the SMP timeout plus the pairing deadline).
    package func deadlinePassed(_ id: UInt64) {
        let resumption: Resumption? = state.withLock { state in
            guard !state.machine.isPairing else { return nil }
            return state.waits.fulfill(id: id, with: .expired)
        }
        resumption?.resume()
    }

    /// The caller gave up; a pairing it asked for ends when nobody else waits for it.
    package func waitCancelled(_ id: UInt64) {
        let (resumption, actions): (Resumption?, [PairingAction]) = state.withLock { state in
            let kind = state.waits.unansweredKind(of: id)
            let resumption = state.waits.fulfill(id: id, with: .cancelled)
            let ending = kind == .starting && state.waits.unansweredCount == 0
            return (resumption, ending ? queued(state.machine.handle(.cancel), &state) : [])
        }
        resumption?.resume()
        execute(actions)
    }
}
