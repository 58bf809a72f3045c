import Bonding
import BluetoothCore
import Glibc
import HCITransport
import Logging
import Synchronization

/// The bonds of a host beside the kernel (`hci-raw:N`), kept without a daemon: when the
/// host first needs the kernel (the facade's first link, or its peripheral host; see
/// ``KernelAdapter``), the ``BondStore`` is loaded into the kernel (Load Long Term Keys, Load
/// Identity Resolving Keys, Load Connection Parameters, which replace what the kernel held),
/// and from then on every key the kernel reports with Store_Hint set is kept in the store,
/// until ``close()``.
///
/// Keys arrive on the monitor's reader thread and are written on a task of their own (the
/// reader never does file I/O), through a queue of at most ``queueLimit`` events; when it
/// is full the newest is dropped and counted (``KernelBondCounters/dropped``): the kernel reports a
/// handful of keys per pairing, so only a flood of foreign events could fill it.
public final class KernelBonds: Sendable {
    public static let queueLimit = 64
    /// How long a pairing's caller waits for its keys after the link is encrypted: the
    /// kernel reports them when key distribution ends, a few packets later.
    public static let defaultKeyWait: Duration = .seconds(5)
    public let keyWait: Duration

    public let adapter: Int
    public let store: BondStore
    private let monitor: Lock<KernelKeyMonitor?> = Lock(nil)
    private let queue: AsyncStream<KernelKeyEvent.Received>.Continuation
    private let state = Lock(State())

    private struct State: Sendable {
        var counters = KernelBondCounters()
        var answers = PendingAnswers<Kind, Bool, BondStoreError>()
        /// Events handed to the keeping task and not yet kept.
        var queued = 0
        /// The LTKs' outcome, held until nothing is queued behind them.
        var heldAnswer: WaitOutcome<Bool, BondStoreError>?
    }

    package enum Kind: Hashable, Sendable { case longTermKey }

    /// Loads `store` into hci`adapter`'s kernel and starts keeping what it reports.
    public static func attach(adapter: Int, store: BondStore) throws(TransportError) -> KernelBonds {
        try attach(
            adapter: adapter, store: store,
            listen: { handler throws(TransportError) in try KernelKeyMonitor.start(index: adapter, handler: handler) },
            load: { () throws(TransportError) in
                // Load Long Term Keys replaces all the kernel holds: what another process
                // saved since this store was opened is in it, as every lookup reads a
                // changed file again.
                let keys = store.kernelKeys()
                try KernelManagement.loadKeys(
                    index: adapter, longTermKeys: keys.longTermKeys, identityResolvingKeys: keys.identityResolvingKeys,
                    connectionParameters: keys.connectionParameters)
            })
    }

    /// `attach` with the control channel's two uses given: listening for key events and
    /// loading the store into the kernel (a test's socket pair stands in for both).
    package static func attach(
        adapter: Int, store: BondStore,
        listen: (@escaping @Sendable (KernelKeyEvent.Received) -> Void) throws(TransportError) -> KernelKeyMonitor,
        load: () throws(TransportError) -> Void, keyWait: Duration = defaultKeyWait
    ) throws(TransportError) -> KernelBonds {
        let (stream, queue) = AsyncStream.makeStream(of: KernelKeyEvent.Received.self, bufferingPolicy: .bufferingOldest(queueLimit))
        let bonds = KernelBonds(adapter: adapter, store: store, queue: queue, keyWait: keyWait)
        // Listening first: a key reported while the store loads is not missed.
        let monitor = try listen { [weak bonds] received in bonds?.enqueue(received) }
        do {
            try load()
        } catch {
            monitor.close()
            throw error
        }
        bonds.monitor.withLock { $0 = monitor }
        Task { [weak bonds] in
            for await received in stream { bonds?.keep(received) }
        }
        return bonds
    }

    private init(adapter: Int, store: BondStore, queue: AsyncStream<KernelKeyEvent.Received>.Continuation, keyWait: Duration) {
        self.adapter = adapter
        self.store = store
        self.queue = queue
        self.keyWait = keyWait
    }

    public var counters: KernelBondCounters { state.withLock { $0.counters } }

    /// Stops keeping keys; a pairing still waiting for its keys is released.
    public func close() {
        monitor.withLock { $0 }?.close()
        queue.finish()
        for resumption in withPendingAnswers({ $0.fulfillAll(with: .cancelled) }) { resumption.resume() }
    }

    private func enqueue(_ received: KernelKeyEvent.Received) {
        // Counted before the yield: the keeping task may take it at once.
        state.withLock { $0.queued += 1 }
        switch queue.yield(received) {
        case .enqueued: break
        case .dropped:
            let dropped = state.withLock {
                $0.queued -= 1
                $0.counters.dropped += 1
                return $0.counters.dropped
            }
            store.logger.error(
                "a key the kernel reported was dropped (\(Self.queueLimit) already wait to be saved): the kernel forgets it at the next attach, and that peer must pair again",
                metadata: ["adapter": "\(adapter)", "dropped": "\(dropped)"])
        case .terminated:
            state.withLock { $0.queued -= 1 }
        @unknown default:
            state.withLock { $0.queued -= 1 }
        }
    }

    /// Keeps one key. A pairing's wait is answered once the kernel's report of its keys
    /// is all kept: at an LTK with nothing queued behind it. The kernel reports a
    /// pairing's keys back to back, the LTKs last, and a legacy pairing two of them (the
    /// peer's, then ours, which a central of ours needs when it reconnects to us): a
    /// tool that exits once its pairing is answered must not lose the second.
    private func keep(_ received: KernelKeyEvent.Received) {
        let outcome = write(received)
        let answer = state.withLock { state -> WaitOutcome<Bool, BondStoreError>? in
            state.queued -= 1
            if case .longTermKey = received.event { state.heldAnswer = Self.combine(state.heldAnswer, outcome) }
            guard state.queued == 0, let held = state.heldAnswer else { return nil }
            state.heldAnswer = nil
            return held
        }
        if let answer {
            for resumption in withPendingAnswers({ $0.fulfill(.longTermKey, with: answer) }) { resumption.resume() }
        }
    }

    /// Writes a key the kernel asks to be kept, and counts what became of it.
    private func write(_ received: KernelKeyEvent.Received) -> WaitOutcome<Bool, BondStoreError> {
        guard received.persistent else {
            count(\.notPersistent)
            return .value(false)
        }
        do throws(BondStoreError) {
            let outcome = try store.keep(received.event, now: Int64(time(nil)))
            count(outcome == .kept ? \.kept : \.refused)
            return .value(outcome == .kept)
        } catch {
            let failed = count(\.failed)
            store.logger.error(
                "a key the kernel reported was not saved: the kernel forgets it at the next attach, and that peer must pair again; fix the bond directory first",
                metadata: ["adapter": "\(adapter)", "path": "\(store.path)", "error": "\(error)", "failed": "\(failed)"])
            return .failed(error)
        }
    }

    /// One answer for a report's LTKs: a store that refused a write wins, then any kept.
    private static func combine(
        _ held: WaitOutcome<Bool, BondStoreError>?, _ new: WaitOutcome<Bool, BondStoreError>
    ) -> WaitOutcome<Bool, BondStoreError> {
        guard let held else { return new }
        switch (held, new) {
        case (.failed, _): return held
        case let (.value(kept), .value(alsoKept)): return .value(kept || alsoKept)
        default: return new
        }
    }

    /// Adds one to `counter` and returns its new value.
    @discardableResult
    private func count(_ counter: WritableKeyPath<KernelBondCounters, Int>) -> Int {
        state.withLock { $0.counters[keyPath: counter] += 1; return $0.counters[keyPath: counter] }
    }

    // MARK: A pairing's wait for its keys

    /// Registers interest in the next Long Term Key kept, before raising security: the
    /// kernel may report it before the raising caller resumes.
    public func expectLongTermKey() -> UInt64 {
        withPendingAnswers { $0.expect(.longTermKey) }
    }

    public func forget(_ id: UInt64) {
        withPendingAnswers { $0.forget(id) }
    }

    /// Waits (at most ``keyWait``) until the LTKs expected by `id`, and whatever was queued
    /// behind them, have been handled: true one kept, false not meant to be kept or no key
    /// came in time (the pairing's caller goes
    /// on either way: the link is encrypted); a store that refused the write throws.
    public func longTermKeyKept(_ id: UInt64) async throws(BondStoreError) -> Bool {
        switch await wait(for: id, until: .now + keyWait, cancellable: false) {
        case let .value(kept): return kept
        case let .failed(error): throw error
        case .expired, .cancelled: return false
        }
    }
}

extension KernelBonds: PendingAnswersOwner {
    package func withPendingAnswers<Result>(_ body: (inout PendingAnswers<Kind, Bool, BondStoreError>) -> Result) -> Result {
        state.withLock { body(&$0.answers) }
    }
}

/// What happened to the keys the kernel reported.
public struct KernelBondCounters: Sendable, Equatable {
    /// Written to the store.
    public var kept = 0
    /// Store_Hint 0: a pairing without bonding, or a peer whose address will change.
    public var notPersistent = 0
    /// Debug keys, connection parameters of unbonded peers, malformed values.
    public var refused = 0
    /// The queue was full.
    public var dropped = 0
    /// The store refused the write (its error goes to the pairing's caller).
    public var failed = 0
}
