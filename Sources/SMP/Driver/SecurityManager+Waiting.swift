import HCI

// How callers wait for a pairing's end: each wait is bounded (the peer must start within
// the SMP timeout; a running pairing ends by its timers) and returns at once when its task
// is cancelled.

extension SecurityManager {
    /// Waits for the running (or, with `starting`, a new) pairing to end. Cancelling the
    /// task returns ``PairingError/cancelled`` at once; when `starting` and nobody else
    /// waits, the pairing is ended too (the caller who wanted it gave up).
    func waitForPairing(starting: Bool) async throws(PairingError) -> PairingKeys {
        // Waiting for the peer to start (our Security Request, or nextPairingResult) is
        // bounded by the SMP timeout (Vol 3 Part H 3.4: reset when we queue an SMP PDU);
        // a running pairing by its timers.
        let peerDeadline = connection.role == .peripheral || !starting ? smpTimeout : nil
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<PairingKeys, PairingError>, Never>) in
                let (actions, early): ([PairingAction], PairingError?) = state.withLock { state in
                    if let ended = state.ended { return ([], .disconnected(ended)) }
                    // Checked under the lock the cancellation handler takes: a cancellation
                    // before this point is seen here, one after it finds the waiter.
                    if Task.isCancelled { return ([], .cancelled) }
                    state.waiters[id] = continuation
                    let actions = starting && !state.machine.isPairing ? queued(state.machine.handle(.pair), &state) : []
                    return (actions, nil)
                }
                if let early {
                    continuation.resume(returning: .failure(early))
                    return
                }
                execute(actions)
                if let peerDeadline {
                    Task { [weak self] in
                        try? await Task.sleep(for: peerDeadline)
                        self?.expireWaiter(id, after: peerDeadline)
                    }
                }
            }
        } onCancel: {
            cancelWaiter(id, endingPairing: starting)
        }
        return try result.get()
    }

    /// The peer did not start a pairing in time. A pairing that did start is left to its
    /// own timers (so the wait is bounded by the SMP timeout plus the pairing deadline).
    private func expireWaiter(_ id: UInt64, after: Duration) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<PairingKeys, PairingError>, Never>? in
            guard !state.machine.isPairing else { return nil }
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.resume(returning: .failure(.deadlineExceeded(.peerToStart, after: after)))
    }

    private func cancelWaiter(_ id: UInt64, endingPairing: Bool) {
        let (waiter, actions) = state.withLock { state -> (CheckedContinuation<Result<PairingKeys, PairingError>, Never>?, [PairingAction]) in
            guard let waiter = state.waiters.removeValue(forKey: id) else { return (nil, []) }
            let actions = endingPairing && state.waiters.isEmpty ? queued(state.machine.handle(.cancel), &state) : []
            return (waiter, actions)
        }
        waiter?.resume(returning: .failure(.cancelled))
        execute(actions)
    }
}
