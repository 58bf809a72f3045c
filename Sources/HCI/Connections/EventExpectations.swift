/// How a wait for a controller event ended.
enum WaitOutcome<Value: Sendable>: Sendable {
    case value(Value)
    case failed(ConnectionError)
    /// The deadline passed first.
    case expired
    /// The waiting task was cancelled first.
    case cancelled
}

/// Events a connection procedure expects, registered *before* the command that causes them
/// is sent: the reader thread may deliver the event before the sending task has even
/// resumed from the Command Status, and an event that finds nobody waiting must not be lost.
///
/// Lives inside its owner's locked state; every method runs under that lock. Continuations
/// are handed back as ``Resumption``s to be resumed after the lock is released.
struct EventExpectations<Kind: Hashable & Sendable, Value: Sendable>: Sendable {
    struct Resumption: Sendable {
        let continuation: CheckedContinuation<WaitOutcome<Value>, Never>
        let outcome: WaitOutcome<Value>
        let timer: Task<Void, Never>?

        func resume() {
            timer?.cancel()
            continuation.resume(returning: outcome)
        }
    }

    private struct Entry: Sendable {
        let id: UInt64
        let kind: Kind
        /// Set when the event came before anyone waited for it.
        var early: WaitOutcome<Value>?
        var continuation: CheckedContinuation<WaitOutcome<Value>, Never>?
        var timer: Task<Void, Never>?
    }

    private var entries: [Entry] = []
    private var nextID: UInt64 = 1

    var isEmpty: Bool { entries.isEmpty }

    /// Registers interest in the next event of `kind`; the id is for ``attach``.
    mutating func expect(_ kind: Kind) -> UInt64 {
        defer { nextID += 1 }
        entries.append(Entry(id: nextID, kind: kind))
        return nextID
    }

    /// Drops an expectation whose command never went out.
    mutating func forget(_ id: UInt64) {
        entries.removeAll { $0.id == id }
    }

    /// Parks `continuation` on expectation `id`, or returns the outcome it gets at once: an
    /// event that already came, a cancellation or a deadline that already passed. Checking
    /// the deadline here, under the owner's lock, closes the race with a timer that fired
    /// before the continuation was parked.
    mutating func attach(
        _ id: UInt64, continuation: CheckedContinuation<WaitOutcome<Value>, Never>,
        timer: Task<Void, Never>?, cancelled: Bool, expired: Bool
    ) -> WaitOutcome<Value>? {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return .cancelled }
        if let early = entries[index].early {
            entries.remove(at: index)
            return early
        }
        if cancelled || expired {
            entries.remove(at: index)
            return cancelled ? .cancelled : .expired
        }
        entries[index].continuation = continuation
        entries[index].timer = timer
        return nil
    }

    /// Delivers `outcome` to every expectation of `kind`, in registration order.
    mutating func fulfill(_ kind: Kind, with outcome: WaitOutcome<Value>) -> [Resumption] {
        var resumptions: [Resumption] = []
        entries.removeAll { entry in
            guard entry.kind == kind else { return false }
            return Self.take(entry, outcome, into: &resumptions)
        }
        for index in entries.indices where entries[index].kind == kind && entries[index].early == nil {
            entries[index].early = outcome
        }
        return resumptions
    }

    /// Delivers `outcome` to the oldest expectation of `kind` only (queues served in order).
    /// `delivered` is false when nobody expects `kind`.
    mutating func fulfillFirst(_ kind: Kind, with outcome: WaitOutcome<Value>) -> (delivered: Bool, resumption: Resumption?) {
        guard let index = entries.firstIndex(where: { $0.kind == kind && $0.early == nil }) else { return (false, nil) }
        var resumptions: [Resumption] = []
        if Self.take(entries[index], outcome, into: &resumptions) {
            entries.remove(at: index)
        } else {
            entries[index].early = outcome
        }
        return (true, resumptions.first)
    }

    /// Delivers `outcome` to every expectation (the connection or the controller is gone).
    mutating func fulfillAll(with outcome: WaitOutcome<Value>) -> [Resumption] {
        var resumptions: [Resumption] = []
        entries.removeAll { Self.take($0, outcome, into: &resumptions) }
        for index in entries.indices where entries[index].early == nil { entries[index].early = outcome }
        return resumptions
    }

    /// Ends the wait of expectation `id` with `outcome` (its deadline or a cancellation),
    /// if it is still waiting.
    mutating func withdraw(_ id: UInt64, with outcome: WaitOutcome<Value>) -> Resumption? {
        guard let index = entries.firstIndex(where: { $0.id == id }), entries[index].continuation != nil else { return nil }
        var resumptions: [Resumption] = []
        _ = Self.take(entries[index], outcome, into: &resumptions)
        entries.remove(at: index)
        return resumptions.first
    }

    /// Whether `entry` had a parked continuation (now in `resumptions`, to be removed).
    private static func take(_ entry: Entry, _ outcome: WaitOutcome<Value>, into resumptions: inout [Resumption]) -> Bool {
        guard let continuation = entry.continuation else { return false }
        resumptions.append(Resumption(continuation: continuation, outcome: outcome, timer: entry.timer))
        return true
    }
}

/// Something that owns ``EventExpectations`` under its lock and can run the suspending half
/// of a wait.
protocol ExpectationOwner: AnyObject, Sendable {
    associatedtype Kind: Hashable & Sendable
    associatedtype Value: Sendable

    /// Runs `body` on the expectations under the owner's lock.
    func withExpectations<Result>(_ body: (inout EventExpectations<Kind, Value>) -> Result) -> Result
}

extension ExpectationOwner {
    /// Suspends until expectation `id` is fulfilled, `deadline` passes, or (when
    /// `cancellable`) the task is cancelled. Cleanup waits pass `cancellable: false`: they
    /// must see the controller's answer even when the caller has given up. Only waits that
    /// observe rather than ask (the end of a connection) pass no deadline.
    func wait(for id: UInt64, until deadline: ContinuousClock.Instant?, cancellable: Bool = true) async -> WaitOutcome<Value> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WaitOutcome<Value>, Never>) in
                let immediate: WaitOutcome<Value>? = withExpectations { expectations in
                    // A deadline, not a poll: cancelled as soon as the event arrives. It takes
                    // the lock to withdraw, so it cannot act before the continuation is parked.
                    let timer = deadline.map { deadline in
                        Task { [weak self] in
                            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                            self?.withExpectations { $0.withdraw(id, with: .expired) }?.resume()
                        }
                    }
                    let outcome = expectations.attach(
                        id, continuation: continuation, timer: timer,
                        cancelled: cancellable && Task.isCancelled,
                        expired: deadline.map { ContinuousClock.now >= $0 } ?? false
                    )
                    if outcome != nil { timer?.cancel() }
                    return outcome
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            if cancellable { withExpectations { $0.withdraw(id, with: .cancelled) }?.resume() }
        }
    }
}
