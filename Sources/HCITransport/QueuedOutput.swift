import BluetoothCore
import Glibc

/// Bytes for a file descriptor, written without ever making the caller wait: a capture
/// (`--btsnoop`) and a decoded trace (`--trace`) are written from the transport's reader
/// thread, which must not wait for a FIFO whose reader stalled, a terminal or a slow card.
///
/// Each ``write(_:)`` is one whole unit (a record, a line). When nothing waits before it
/// and the descriptor cannot make a write wait for a reader (a regular file, or one set
/// non-blocking), it is written in place, so a capture to a file holds every packet up to
/// a crash. What the descriptor does not take at once, and all output to a blocking pipe,
/// terminal or socket, waits in order for a thread of its own, up to `limit` bytes; past
/// that a unit is refused whole and counted, never half written. A write error ends the
/// output: every later unit is refused too.
package final class QueuedOutput: @unchecked Sendable {
    /// Units refused so far: in all, and since the last one accepted.
    package struct Refusals: Sendable, Equatable {
        package var total = 0
        package var sinceLastAccepted = 0
    }

    private struct State {
        var pending: [UInt8] = []
        /// Bytes the writer thread took from `pending` and is writing.
        var inFlight = 0
        var threadStarted = false
        /// No unit is accepted any more; the writer thread ends once `pending` is written.
        var closing = false
        /// `close` stopped waiting: the writer thread drops what is left and ends.
        var abandoned = false
        /// `close` found the thread mid-write: the thread closes the descriptor.
        var threadClosesDescriptor = false
        var refusals = Refusals()
        var failure: Int32?
    }

    private let fd: Int32
    private let ownsDescriptor: Bool
    /// O_NONBLOCK is set: a write takes what it can and never waits.
    private let nonBlocking: Bool
    /// Units are tried in place before they are queued.
    private let writesInPlace: Bool
    private let target: Posix.WriteTarget
    package let limit: Int
    /// Guards `state`; wakes the writer thread and a closing caller.
    private let condition = MonotonicCondition()
    private var state = State()

    /// `ownsDescriptor`: ``close(within:)`` closes `fd` once everything is written.
    package init(fd: Int32, limit: Int, ownsDescriptor: Bool) {
        self.fd = fd
        self.limit = limit
        self.ownsDescriptor = ownsDescriptor
        let flags = fcntl(fd, F_GETFL)
        nonBlocking = flags >= 0 && flags & O_NONBLOCK != 0
        var status = stat()
        let kind = fstat(fd, &status) == 0 ? status.st_mode & S_IFMT : 0
        target = Posix.WriteTarget(fd: fd)
        // A regular file's write waits for no reader, only (rarely) for the disk.
        writesInPlace = nonBlocking || kind == S_IFREG
    }

    deinit {
        // The writer thread holds a reference while it runs, so it has ended here.
        if ownsDescriptor, !state.abandoned { Glibc.close(fd) }
    }

    /// Writes or queues the unit `make` builds, or refuses it (over the bound, closed or
    /// failed): true when accepted. `make` runs under the output's lock, so units are
    /// numbered and written in one order, and it sees the refusals before it.
    @discardableResult
    package func write(_ make: (Refusals) -> [UInt8]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let bytes = make(state.refusals)
        guard !state.closing, state.failure == nil, state.pending.count + bytes.count <= limit else {
            state.refusals.total += 1
            state.refusals.sinceLastAccepted += 1
            return false
        }
        state.refusals.sinceLastAccepted = 0
        var taken = 0
        if writesInPlace, state.pending.isEmpty, state.inFlight == 0 {
            taken = bytes.withUnsafeBytes { Posix.writeSome(fd, $0, to: target) }
            if taken < 0 {
                state.failure = Int32(-taken)
                return true
            }
            if taken == bytes.count { return true }
        }
        state.pending += bytes[taken...]
        if !state.threadStarted {
            state.threadStarted = true
            // The thread keeps the output alive until it has written everything.
            if case let .success(thread) = PosixThread.start({ [self] in drain() }) {
                pthread_detach(thread)
            } else {
                state.failure = EAGAIN
            }
        }
        condition.broadcast()
        return true
    }

    /// Units refused so far.
    package var refusals: Refusals { locked { $0.refusals } }

    /// Bytes accepted and not yet written.
    package var queuedBytes: Int { locked { $0.pending.count + $0.inFlight } }

    /// Whether ``close(within:)`` was called.
    package var isClosed: Bool { locked { $0.closing } }

    /// The errno that ended the output, if one did.
    package var failure: Int32? { locked { $0.failure } }

    /// Stops accepting units and waits up to `within` for the queued ones to be written;
    /// returns the bytes that were not (then dropped). The descriptor is closed, when
    /// owned, once the writer thread has let go of it.
    @discardableResult
    package func close(within: Duration) -> Int {
        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: within)
        condition.lock()
        defer { condition.unlock() }
        guard !state.closing else { return 0 }
        state.closing = true
        condition.broadcast()
        while state.threadStarted, state.failure == nil, !state.pending.isEmpty || state.inFlight > 0, condition.wait(until: deadline) {}
        let unwritten = state.pending.count
        state.pending = []
        state.abandoned = true
        condition.broadcast()
        if ownsDescriptor {
            if state.inFlight > 0 { state.threadClosesDescriptor = true } else { Glibc.close(fd) }
        }
        return unwritten
    }

    private func locked<T>(_ body: (inout State) -> T) -> T {
        condition.locked { body(&state) }
    }

    /// The writer thread: takes everything queued and writes it with no lock held, until
    /// the output closes.
    private func drain() {
        condition.lock()
        while !state.abandoned {
            if state.failure == nil, !state.pending.isEmpty {
                let bytes = state.pending
                state.pending = []
                state.inFlight = bytes.count
                condition.unlock()
                let outcome = writeOut(bytes)
                condition.lock()
                state.inFlight = 0
                if let failure = outcome.failure {
                    state.failure = failure
                } else if outcome.written < bytes.count {
                    // Abandoned mid-write: `close` counts what is left.
                    state.pending = Array(bytes[outcome.written...]) + state.pending
                }
                condition.broadcast()
                continue
            }
            if state.closing { break }
            condition.wait()
        }
        let closeDescriptor = state.threadClosesDescriptor
        condition.unlock()
        if closeDescriptor { Glibc.close(fd) }
    }

    /// Writes `bytes`, as long as the descriptor needs, looking every 100 ms whether
    /// `close` gave up waiting (a non-blocking descriptor; a blocking one waits in write()).
    private func writeOut(_ bytes: [UInt8]) -> (written: Int, failure: Int32?) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                let written = Posix.writeSome(fd, rest, to: target)
                if written < 0 { return (offset, Int32(-written)) }
                offset += written
                if written > 0 { continue }
                if locked({ $0.abandoned }) { return (offset, nil) }
                _ = Posix.wait(fd, for: Int16(POLLOUT), until: MonotonicClock.nanoseconds() &+ 100_000_000)
            }
            return (offset, nil)
        }
    }
}
