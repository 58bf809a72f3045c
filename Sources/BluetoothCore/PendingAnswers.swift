/// How a wait for an answer ended.
package enum WaitOutcome<Value: Sendable, Failure: Error & Sendable>: Sendable {
    case value(Value)
    case failed(Failure)
    /// The deadline passed first.
    case expired
    /// The waiting task was cancelled first.
    case cancelled

    /// An answer that came as a result.
    package init(_ result: Result<Value, Failure>) {
        switch result {
        case let .success(value): self = .value(value)
        case let .failure(error): self = .failed(error)
        }
    }
}

/// Requests waiting for their answers: the one primitive behind every "send, then wait for
/// the answer, with a deadline" of the stack (HCI commands, connection events, ATT
/// transactions, L2CAP signaling, SMP).
///
/// An answer is expected *before* the request that causes it is sent: a reader thread may
/// deliver the answer before the sending task has even suspended, and an answer that finds
/// nobody waiting yet is kept for the waiter instead of being lost.
///
/// Lives inside its owner's locked state (see ``PendingAnswersOwner``); every method runs
/// under that lock. Continuations come back as ``Resumption``s, to be resumed once the lock
/// is released. Deadlines are entries of ``DeadlineTimer``, cancelled as soon as the answer
/// comes, so memory follows the waits in progress, not the traffic of the last 30 s.
package struct PendingAnswers<Kind: Hashable & Sendable, Value: Sendable, Failure: Error & Sendable>: Sendable {
    package typealias Outcome = WaitOutcome<Value, Failure>

    /// A continuation to resume, with its outcome, after the owner's lock is released.
    package struct Resumption: Sendable {
        let continuation: CheckedContinuation<Outcome, Never>
        let outcome: Outcome
        let deadline: DeadlineTimer.Token?

        package func resume() {
            if let deadline { DeadlineTimer.shared.cancel(deadline) }
            continuation.resume(returning: outcome)
        }
    }

    private struct Entry: Sendable {
        let id: UInt64
        let kind: Kind
        /// Set when the answer (or the end of the wait) came before anyone waited.
        var early: Outcome?
        var continuation: CheckedContinuation<Outcome, Never>?
        var deadline: DeadlineTimer.Token?
    }

    private var entries: [Entry] = []
    private var nextID: UInt64 = 1

    package init() {}

    /// Expectations registered and not yet answered and collected.
    package var count: Int { entries.count }

    /// Registers interest in the next answer of `kind`; wait for it with
    /// ``PendingAnswersOwner/wait(for:until:cancellable:)``.
    package mutating func expect(_ kind: Kind) -> UInt64 {
        defer { nextID += 1 }
        entries.append(Entry(id: nextID, kind: kind))
        return nextID
    }

    /// Drops an expectation whose request never went out.
    package mutating func forget(_ id: UInt64) {
        entries.removeAll { $0.id == id }
    }

    /// Expectations with no outcome yet: the waits an answer would still reach.
    package var unansweredCount: Int { entries.lazy.filter { $0.early == nil }.count }

    /// The kind of expectation `id` while it has no outcome yet.
    package func unansweredKind(of id: UInt64) -> Kind? {
        entries.first { $0.id == id && $0.early == nil }?.kind
    }

    /// Delivers `outcome` to every expectation of `kind`, in registration order.
    package mutating func fulfill(_ kind: Kind, with outcome: Outcome) -> [Resumption] {
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
    package mutating func fulfillFirst(_ kind: Kind, with outcome: Outcome) -> (delivered: Bool, resumption: Resumption?) {
        guard let index = entries.firstIndex(where: { $0.kind == kind && $0.early == nil }) else { return (false, nil) }
        return (true, settle(at: index, with: outcome))
    }

    /// Delivers `outcome` to expectation `id`, if it is still registered and unanswered.
    package mutating func fulfill(id: UInt64, with outcome: Outcome) -> Resumption? {
        guard let index = entries.firstIndex(where: { $0.id == id && $0.early == nil }) else { return nil }
        return settle(at: index, with: outcome)
    }

    /// Delivers `outcome` to every expectation (the link, the bearer or the transport is gone).
    package mutating func fulfillAll(with outcome: Outcome) -> [Resumption] {
        var resumptions: [Resumption] = []
        entries.removeAll { Self.take($0, outcome, into: &resumptions) }
        for index in entries.indices where entries[index].early == nil { entries[index].early = outcome }
        return resumptions
    }

    /// Parks `continuation` on expectation `id`, or returns the outcome it gets at once: an
    /// answer that already came, a cancellation, or a deadline that already passed.
    mutating func attach(
        _ id: UInt64, continuation: CheckedContinuation<Outcome, Never>,
        deadline: DeadlineTimer.Token?, cancelled: Bool, expired: Bool
    ) -> Outcome? {
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
        entries[index].deadline = deadline
        return nil
    }

    /// Hands `outcome` to the waiter at `index` (removing the entry), or keeps it for a
    /// waiter still to come.
    private mutating func settle(at index: Int, with outcome: Outcome) -> Resumption? {
        var resumptions: [Resumption] = []
        if Self.take(entries[index], outcome, into: &resumptions) {
            entries.remove(at: index)
        } else {
            entries[index].early = outcome
        }
        return resumptions.first
    }

    /// Whether `entry` had a parked continuation (now in `resumptions`, to be removed).
    private static func take(_ entry: Entry, _ outcome: Outcome, into resumptions: inout [Resumption]) -> Bool {
        guard let continuation = entry.continuation else { return false }
        resumptions.append(Resumption(continuation: continuation, outcome: outcome, deadline: entry.deadline))
        return true
    }
}

/// Something that keeps ``PendingAnswers`` under its lock and runs the suspending half of a
/// wait. It may act on a passed deadline or a cancelled wait itself (an HCI command gives
/// its credit back, an ATT bearer closes) by implementing the two hooks; by default the
/// waiter is simply released.
package protocol PendingAnswersOwner: AnyObject, Sendable {
    associatedtype Kind: Hashable & Sendable
    associatedtype Value: Sendable
    associatedtype Failure: Error & Sendable

    /// Runs `body` on the pending answers under the owner's lock.
    func withPendingAnswers<Result>(_ body: (inout PendingAnswers<Kind, Value, Failure>) -> Result) -> Result

    /// Expectation `id`'s deadline passed (on the timer thread): end its wait with
    /// `.expired`, plus whatever the owner must undo.
    func deadlinePassed(_ id: UInt64)

    /// The task waiting on expectation `id` was cancelled: end its wait with `.cancelled`.
    func waitCancelled(_ id: UInt64)
}

extension PendingAnswersOwner {
    package func deadlinePassed(_ id: UInt64) {
        withPendingAnswers { $0.fulfill(id: id, with: .expired) }?.resume()
    }

    package func waitCancelled(_ id: UInt64) {
        withPendingAnswers { $0.fulfill(id: id, with: .cancelled) }?.resume()
    }

    /// Suspends until expectation `id` is answered, `deadline` passes, or (when
    /// `cancellable`) the task is cancelled. Cleanup waits pass `cancellable: false`: they
    /// must see the answer even when the caller has given up. Only waits that observe
    /// rather than ask (the end of a connection), or whose deadline the owner keeps on
    /// ``DeadlineTimer`` itself (an ATT request's starts when it reaches the wire; a
    /// pairing's are its SMP timers), pass no deadline.
    package func wait(
        for id: UInt64, until deadline: ContinuousClock.Instant?, cancellable: Bool = true
    ) async -> WaitOutcome<Value, Failure> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WaitOutcome<Value, Failure>, Never>) in
                let immediate: WaitOutcome<Value, Failure>? = withPendingAnswers { answers in
                    // Armed under the owner's lock, which the timer's action takes too, so
                    // it cannot act before the continuation is parked.
                    let token = deadline.map { deadline in
                        DeadlineTimer.shared.schedule(at: deadline) { [weak self] in self?.deadlinePassed(id) }
                    }
                    let outcome = answers.attach(
                        id, continuation: continuation, deadline: token,
                        cancelled: cancellable && Task.isCancelled,
                        expired: deadline.map { ContinuousClock.now >= $0 } ?? false
                    )
                    if outcome != nil, let token { DeadlineTimer.shared.cancel(token) }
                    return outcome
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            if cancellable { waitCancelled(id) }
        }
    }
}
