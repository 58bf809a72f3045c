import BluetoothCore
import Glibc
import Synchronization
// Socket constants are declared by whichever clang module (Glibc or CBluetooth, whose
// headers include <sys/socket.h>) is built first; import both so either works.
import CBluetooth

/// One file descriptor, its reader thread and its writers: the machinery shared by every
/// descriptor-based transport and by the monitor reader.
///
/// The reader is a plain pthread that poll()s the descriptor and the read end of a wake
/// pipe; `close()`, a failure and a frame posted for the reader to write (`write` with
/// `waits` false) write to the pipe, so the thread never sleeps past any of them. Chunks go
/// synchronously to the `chunk` handler on that thread. The descriptor is closed by
/// whoever finishes last (the reader thread on its way out, or `close()` when the thread
/// never started), under the same lock writers hold, so a write can never hit a
/// descriptor number the system has reused.
package final class DescriptorLoop: Sendable {
    /// Runs on the reader thread for every chunk read (`bytes` non-nil) and when the
    /// deadline it last returned passes (`bytes` nil). Returns the next deadline, if any
    /// (monotonic nanoseconds).
    package typealias ChunkHandler = @Sendable (_ bytes: UnsafeBufferPointer<UInt8>?, _ now: UInt64) -> UInt64?

    package let spec: TransportSpec?
    package let name: String
    private let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// How `fd` is written: a peer that went away is an EPIPE error, never a SIGPIPE that
    /// ends the process.
    private let target: Posix.WriteTarget
    /// A pty whose other side closed reads EIO: for a stream that is the end of file.
    private let eioIsEndOfFile: Bool
    private let readSize: Int
    /// See ``ReaderWait``; 0 never spins.
    private let spinNanoseconds: UInt64

    private struct State {
        var started = false
        var closeRequested = false
        var thread: pthread_t?
        var cleanup: (@Sendable () -> Void)?
    }
    private let state: Lock<State>
    /// The write side. On a datagram descriptor (an HCI or L2CAP socket) a write holds it
    /// while it waits for the descriptor to take the frame. On a byte stream nothing waits
    /// under it: frames queue in `pending`, in order, and whoever holds the lock writes what
    /// the stream takes without waiting (see `write`).
    private struct Output {
        /// False once the descriptor is closed.
        var open = true
        /// A byte stream, once started: how long the reader's own frames may wait for the
        /// stream to take them.
        var streamTimeout: Duration?
        /// The reader thread of a stream. What it writes while it handles a chunk waits in
        /// `pending` and goes out in one write when the handler returns, so the answers to
        /// a burst of events (ACL packets sent as Number Of Completed Packets return
        /// credits, ATT responses) cost one system call, not one each. It never waits for
        /// the stream: what the stream does not take is written when poll() says it can be.
        var reader: pthread_t?
        /// Bytes of whole frames the stream has not taken yet, in the order they were
        /// written (the rest of a frame it took part of comes first). Another thread's
        /// frame goes out at once, after what waits, so order holds.
        var pending: [UInt8] = []
        /// Bytes ever queued in and taken from `pending`: a frame is out once `taken`
        /// reaches the count `queued` had when it was appended.
        var queued: UInt64 = 0
        var taken: UInt64 = 0
        /// Since when the stream has taken nothing while bytes wait (nil when it keeps up).
        var stalledSince: UInt64?
        /// What ended the stream's writing: a write error, a frame's deadline, the backlog
        /// bound. Every later write fails with it, and the reader ends with it.
        var failure: TransportError?
    }
    private let output = Lock(Output())
    /// Whether the descriptor is still open, for ``withOpenDescriptor(_:)``: a lock of its
    /// own, never held while waiting, so reading an option does not wait behind a write
    /// the other end holds back (the output lock is held through that wait).
    private let lifetime = Lock(true)
    /// Past this many bytes waiting, the reader's coalesced frames are written at once.
    static let coalescingLimit = 16 * 1024
    /// At most this many bytes of a stream wait for it to take them.
    package static let backlogLimit = 256 * 1024
    private let closing = Atomic(false)
    /// With `kernelTimestamps`: the kernel's time of the datagram being handed to the
    /// chunk handler, nanoseconds since the Unix epoch (-1 for none). Written and read on
    /// the reader thread only; atomic because the class is shared.
    private let kernelTime = Atomic<Int64>(-1)
    private let kernelTimestamps: Bool

    /// Takes ownership of `fd` (made non-blocking here). `cleanup` runs once after the
    /// descriptor is closed, e.g. to stop a process serving the other end.
    /// `kernelTimestamps` (a datagram socket) asks the kernel for each datagram's time
    /// (SO_TIMESTAMPNS), which the chunk handler reads as ``kernelTimestamp``.
    package init(
        fd: Int32, spec: TransportSpec?, name: String, eioIsEndOfFile: Bool = false,
        readSize: Int = 65_536, wait: ReaderWait = .blocking, kernelTimestamps: Bool = false,
        cleanup: (@Sendable () -> Void)? = nil
    ) throws(TransportError) {
        guard let pipe = Posix.makeWakePipe() else {
            let code = errno
            Glibc.close(fd)
            throw TransportError.from(errno: code, operation: .open, spec: spec)
        }
        if let code = Posix.setNonBlocking(fd) ?? (kernelTimestamps && bareble_enable_kernel_timestamps(fd) != 0 ? errno : nil) {
            Glibc.close(fd)
            Glibc.close(pipe.read)
            Glibc.close(pipe.write)
            throw TransportError.from(errno: code, operation: .configure, spec: spec)
        }
        self.fd = fd
        self.spec = spec
        self.name = name
        target = Posix.WriteTarget(fd: fd)
        self.eioIsEndOfFile = eioIsEndOfFile
        self.readSize = readSize
        self.kernelTimestamps = kernelTimestamps
        spinNanoseconds = wait.spinNanoseconds
        wakeRead = pipe.read
        wakeWrite = pipe.write
        state = Lock(State(cleanup: cleanup))
    }

    deinit {
        // A reader that ended on its own (end of file) and was never closed is not joined.
        let neverStarted = state.withLock { state in
            if let thread = state.thread, !state.closeRequested { pthread_detach(thread) }
            return !state.started && !state.closeRequested
        }
        // Nobody started or closed it: the descriptor (for a kernel socket, its link) is
        // still ours to release.
        if neverStarted { releaseDescriptor() }
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// Starts the reader. `streamTimeout` makes it a byte stream's, whose frames need not
    /// go one per write (see `Output`): what the reader writes while a chunk is handled
    /// goes out in one write when the handler returns, and what the stream does not take
    /// must be taken within that timeout, or the loop ends with the failure.
    package func start(
        chunk: @escaping ChunkHandler, closed: @escaping @Sendable (TransportError?) -> Void, streamTimeout: Duration? = nil
    ) throws(TransportError) {
        let failure: TransportError? = state.withLock { state in
            if state.closeRequested { return .notOpen(spec: name) }
            if state.started { return .alreadyStarted(spec: name) }
            // Before the thread runs: a send right after `start` returns already queues.
            if let streamTimeout { output.withLock { $0.streamTimeout = streamTimeout } }
            switch PosixThread.start({ self.run(chunk: chunk, closed: closed, streamTimeout: streamTimeout) }) {
            case let .success(thread):
                state.thread = thread
            case let .failure(error):
                return .system(spec: name, operation: .open, errno: error.code, message: Posix.message(error.code))
            }
            state.started = true
            return nil
        }
        if let failure { throw failure }
    }

    /// Writes `bytes` whole, as one frame, within `timeout`. On a byte stream the reader
    /// thread only queues it (see `Output`); another thread waits for the stream to take it
    /// without holding the lock the reader needs, unless `waits` is false: then what the
    /// stream does not take at once is left to the reader, under the reader's deadline, and
    /// a failure ends the transport instead of coming back here. A frame the stream did not
    /// take by its deadline ends the stream's writing: part of it may be out, so nothing
    /// after it could be framed.
    package func write(_ bytes: UnsafeRawBufferPointer, timeout: Duration, waits: Bool = true) throws(TransportError) {
        let start = MonotonicClock.nanoseconds()
        let queued: Result<UInt64?, TransportError> = output.withLock { output in
            guard output.open, !closing.load(ordering: .relaxed) else { return .failure(.notOpen(spec: name)) }
            if let failure = output.failure { return .failure(failure) }
            guard output.streamTimeout != nil else {
                if let error = writeLocked(bytes, until: start &+ MonotonicClock.nanoseconds(in: timeout), timeout: timeout) {
                    return .failure(error)
                }
                return .success(nil)
            }
            guard output.pending.count + bytes.count <= Self.backlogLimit else {
                return .failure(fail(&output, .outputBacklog(spec: name, bytes: output.pending.count + bytes.count)))
            }
            let fromReader = output.reader.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            // The common case, nothing waiting and another thread's frame: straight from the
            // caller's bytes, with no copy into `pending` unless the stream leaves some.
            var taken = 0
            let tried = !fromReader && output.pending.isEmpty
            if tried {
                taken = Posix.writeSome(fd, bytes, to: target)
                if taken < 0 {
                    return .failure(fail(&output, TransportError.from(errno: Int32(-taken), operation: .write, spec: spec)))
                }
                output.queued &+= UInt64(taken)
                output.taken &+= UInt64(taken)
                if taken == bytes.count { return .success(nil) }
                output.stalledSince = MonotonicClock.nanoseconds()
            }
            output.pending.append(contentsOf: bytes[taken...])
            output.queued &+= UInt64(bytes.count - taken)
            if fromReader {
                if output.pending.count >= Self.coalescingLimit { writePending(&output) }
                return output.failure.map { .failure($0) } ?? .success(nil)
            }
            if !tried { writePending(&output) }
            if let failure = output.failure { return .failure(failure) }
            guard output.taken < output.queued else { return .success(nil) }
            guard waits else {
                // The reader may sleep without POLLOUT: it looks at `pending` when woken.
                wake()
                return .success(nil)
            }
            return .success(output.queued)
        }
        guard let end = try queued.get() else { return }
        try waitUntilTaken(end, until: start &+ MonotonicClock.nanoseconds(in: timeout), timeout: timeout)
    }

    /// Waits, holding no lock, until the stream took the first `end` bytes queued, writing
    /// what waits whenever the stream can take more.
    private func waitUntilTaken(_ end: UInt64, until deadline: UInt64, timeout: Duration) throws(TransportError) {
        while true {
            // The wake pipe becomes readable when the descriptor closes or the stream fails,
            // but the running reader empties it, so it may not stay readable: the wait is
            // at most 10 ms, and the lock then says closed or failed. 10 ms also because
            // another sender may write the rest of this frame and fill the stream, and no
            // POLLOUT would then tell this one its frame is out.
            var entries = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                           pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            _ = poll(&entries, 2, min(10, Posix.pollTimeout(until: deadline)))
            let failure: TransportError?? = output.withLock { output in
                guard output.open, !closing.load(ordering: .relaxed) else { return .some(output.failure ?? .notOpen(spec: name)) }
                if output.failure == nil { writePending(&output) }
                if let failure = output.failure { return .some(failure) }
                if output.taken >= end { return .some(nil) }
                guard MonotonicClock.nanoseconds() >= deadline else { return nil }
                return .some(fail(&output, .timedOut(spec: name, waitingFor: "the controller to accept a packet", after: timeout)))
            }
            if let failure {
                if let failure { throw failure }
                return
            }
        }
    }

    /// Writes what waits for a stream, as much as it takes now without waiting; a failure
    /// ends the stream's writing.
    private func writePending(_ output: inout Output) {
        guard !output.pending.isEmpty else { return }
        let count = output.pending.withUnsafeBytes { Posix.writeSome(fd, $0, to: target) }
        if count < 0 {
            _ = fail(&output, TransportError.from(errno: Int32(-count), operation: .write, spec: spec))
        } else if count == output.pending.count {
            output.taken &+= UInt64(count)
            output.stalledSince = nil
            output.pending.removeAll(keepingCapacity: output.pending.capacity <= Self.coalescingLimit * 2)
        } else {
            output.taken &+= UInt64(count)
            output.pending.removeFirst(count)
            // The stall is counted from the last write the stream took anything of.
            if count > 0 || output.stalledSince == nil { output.stalledSince = MonotonicClock.nanoseconds() }
        }
    }

    /// Ends the stream's writing with `error` (the first failure stays) and wakes the reader
    /// and every waiting writer; returns the failure that stands.
    private func fail(_ output: inout Output, _ error: TransportError) -> TransportError {
        if output.failure == nil {
            output.failure = error
            output.pending = []
            wake()
        }
        return output.failure ?? error
    }

    private func wake() {
        var one: UInt8 = 1
        _ = Glibc.write(wakeWrite, &one, 1)
    }

    /// The reader, woken: empties the pipe, so it sleeps again until the next wake.
    private func drainWakePipe() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { Glibc.read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// The reader, between chunks: writes what waits (its coalesced frames, or what the
    /// stream did not take before) and checks the deadline of a stalled stream. Returns
    /// when to look again (nothing waits: nil), or the failure that ends the stream.
    private func serviceOutput(now: UInt64, timeout: Duration) -> Result<UInt64?, TransportError> {
        output.withLock { output in
            guard output.open else { return .success(nil) }
            if output.failure == nil { writePending(&output) }
            if let failure = output.failure { return .failure(failure) }
            guard !output.pending.isEmpty, let since = output.stalledSince else { return .success(nil) }
            let due = since &+ MonotonicClock.nanoseconds(in: timeout)
            guard now < due else {
                return .failure(fail(&output, .timedOut(spec: name, waitingFor: "the controller to accept a packet", after: timeout)))
            }
            return .success(due)
        }
    }

    /// Writes `bytes` whole by `deadline` (a datagram descriptor); the output lock is held.
    private func writeLocked(_ bytes: UnsafeRawBufferPointer, until deadline: UInt64, timeout: Duration) -> TransportError? {
        do throws(Posix.WriteFailure) {
            try Posix.writeAll(fd, bytes, until: deadline, to: target)
            return nil
        } catch {
            switch error {
            case .timedOut:
                return .timedOut(spec: name, waitingFor: "the controller to accept a packet", after: timeout)
            case let .errno(code):
                return TransportError.from(errno: code, operation: .write, spec: spec)
            }
        }
    }

    /// Stops the reader (waiting for it unless called from it) and closes the descriptor.
    package func close() {
        let action: (thread: pthread_t?, started: Bool)? = state.withLock { state in
            if state.closeRequested { return nil }
            state.closeRequested = true
            return (state.thread, state.started)
        }
        guard let action else { return }
        closing.store(true, ordering: .releasing)
        wake()
        if let thread = action.thread {
            if pthread_equal(thread, pthread_self()) != 0 {
                // Called from the receive callback: the thread finishes on its own.
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        } else if !action.started {
            releaseDescriptor()
        }
    }

    package var isClosing: Bool { closing.load(ordering: .relaxed) }

    /// Runs `body` with the descriptor while it is open, under `lifetime` so it cannot be
    /// closed meanwhile; nil once it is closed (its number may then be another file's).
    /// Keep `body` to a system call or two: closing waits for it.
    package func withOpenDescriptor<T>(_ body: (Int32) -> T) -> T? {
        lifetime.withLock { open in open ? body(fd) : nil }
    }

    /// For the chunk handler of a loop made with `kernelTimestamps`: when the kernel queued
    /// the datagram being handled, in nanoseconds since the Unix epoch; nil when it gave none.
    package var kernelTimestamp: Int64? {
        let value = kernelTime.load(ordering: .relaxed)
        return value < 0 ? nil : value
    }

    private func releaseDescriptor() {
        // A writer waiting for the stream polls the wake pipe too: it wakes, then finds the
        // descriptor closed.
        wake()
        output.withLock { output in
            lifetime.withLock { open in
                if open {
                    // A socket's duplicate (a security wait's) would keep it, and its link,
                    // alive past the close: shutdown ends it for every descriptor of it.
                    if target == .socket { _ = shutdown(fd, Int32(SHUT_RDWR)) }
                    Glibc.close(fd)
                }
                open = false
            }
            output.open = false
            output.pending = []
        }
        let cleanup = state.withLock { state in
            defer { state.cleanup = nil }
            return state.cleanup
        }
        cleanup?()
    }

    private enum ReadOutcome {
        case data(Int)
        case wouldBlock
        case endOfFile
        case failed(TransportError)
    }

    private func readOnce(into buffer: UnsafeMutableBufferPointer<UInt8>) -> ReadOutcome {
        let count: Int
        if kernelTimestamps {
            var nanoseconds: Int64 = -1
            count = bareble_recv_timestamped(fd, buffer.baseAddress, buffer.count, &nanoseconds)
            kernelTime.store(nanoseconds, ordering: .relaxed)
        } else {
            count = read(fd, buffer.baseAddress, buffer.count)
        }
        if count > 0 { return .data(count) }
        if count == 0 { return .endOfFile }
        switch errno {
        case EINTR, EAGAIN, EWOULDBLOCK: return .wouldBlock
        case EIO where eioIsEndOfFile: return .endOfFile
        case let code: return .failed(TransportError.from(errno: code, operation: .read, spec: spec))
        }
    }

    private func run(chunk: ChunkHandler, closed: @Sendable (TransportError?) -> Void, streamTimeout: Duration?) {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: readSize)
        defer { buffer.deallocate() }
        if streamTimeout != nil { output.withLock { $0.reader = pthread_self() } }
        var deadline: UInt64?
        var failure: TransportError?
        // Until then the reader tries reads without sleeping (ReaderWait.spinning).
        var spinUntil: UInt64 = 0
        // While frames wait for a stream that did not take them: when the stall ends it.
        var outputDue: UInt64?
        // After the handler ran (it may have written) or the stream became writable.
        func serviceOutput(_ now: UInt64) -> Bool {
            guard let streamTimeout else { return true }
            switch self.serviceOutput(now: now, timeout: streamTimeout) {
            case let .success(due):
                outputDue = due
                return true
            case let .failure(error):
                failure = error
                return false
            }
        }
        loop: while !closing.load(ordering: .acquiring) {
            var outcome = ReadOutcome.wouldBlock
            var now = MonotonicClock.nanoseconds()
            if now < spinUntil {
                outcome = readOnce(into: buffer)
                if case .wouldBlock = outcome {
                    if let due = deadline, now >= due {
                        deadline = chunk(nil, now)
                        guard serviceOutput(now) else { break loop }
                    } else if outputDue != nil, !serviceOutput(now) {
                        break loop
                    }
                    continue
                }
            } else {
                let events = outputDue == nil ? POLLIN : POLLIN | POLLOUT
                var entries = [pollfd(fd: fd, events: Int16(events), revents: 0),
                               pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                let wakeAt = min(deadline ?? .max, outputDue ?? .max)
                let ready = poll(&entries, 2, wakeAt == .max ? -1 : Posix.pollTimeout(until: wakeAt))
                if ready < 0 {
                    if errno == EINTR { continue }
                    failure = TransportError.from(errno: errno, operation: .read, spec: spec)
                    break
                }
                now = MonotonicClock.nanoseconds()
                if entries[1].revents != 0 {
                    // Closed, the stream's writing failed (`fail`), or another thread left
                    // frames for the reader to write (`write` with `waits` false).
                    drainWakePipe()
                    if closing.load(ordering: .acquiring) || output.withLock({ $0.failure != nil }) { break }
                    guard serviceOutput(now) else { break }
                    continue
                }
                if outputDue != nil, !serviceOutput(now) { break }
                // Only nothing to read proves a silent controller: bytes waiting are read
                // first (see the stamp below).
                guard entries[0].revents & ~Int16(POLLOUT) != 0 else {
                    if let due = deadline, now >= due {
                        deadline = chunk(nil, now)
                        guard serviceOutput(now) else { break }
                    }
                    continue
                }
                outcome = readOnce(into: buffer)
            }
            switch outcome {
            case let .data(count):
                now = MonotonicClock.nanoseconds()
                // A late reader (its handler ran long, or a busy machine did not schedule
                // it) finds bytes that were waiting: as far as anyone can tell they came
                // before the stall deadline, so they are stamped just before it. Only
                // poll() timing out with nothing to read proves a silent controller; the
                // next deadline then counts from this read, not from the stamp.
                let stamp = deadline.map { min(now, $0 &- 1) } ?? now
                ReaderChunk.begin()
                deadline = chunk(UnsafeBufferPointer(rebasing: buffer[0..<count]), stamp).map { $0 &+ (now &- stamp) }
                // What the handler put off (waking consumers) runs before the coalesced
                // write, so anything it sends joins that write.
                ReaderChunk.end()
                guard serviceOutput(now) else { break loop }
                if spinNanoseconds > 0 { spinUntil = now &+ spinNanoseconds }
            case .wouldBlock:
                continue
            case .endOfFile:
                break loop
            case let .failed(error):
                failure = error
                break loop
            }
        }
        closing.store(true, ordering: .releasing)
        failure = failure ?? output.withLock { $0.failure }
        releaseDescriptor()
        closed(failure)
    }
}
