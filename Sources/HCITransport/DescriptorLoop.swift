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
/// pipe; `close()` writes to the pipe, so the thread never sleeps past a close. Chunks go
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
    /// Sockets are written with send(MSG_NOSIGNAL), so a peer that went away is an EPIPE
    /// error, not a SIGPIPE that kills the process.
    private let isSocket: Bool
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
    /// The write side, held while writing and while closing the descriptor.
    private struct Output {
        /// False once the descriptor is closed.
        var open = true
        /// The reader thread, while it handles a chunk of a stream whose writes it
        /// coalesces: what it writes meanwhile waits in `pending` and goes out in one write
        /// when the handler returns, so the answers to a burst of events (ACL packets sent
        /// as Number Of Completed Packets return credits, ATT responses) cost one system
        /// call, not one each. Another thread's frame is never held back (the reader's
        /// handler may run long): it goes out at once, after what waits, so order holds.
        var coalescingThread: pthread_t?
        var pending: [UInt8] = []
    }
    private let output = Lock(Output())
    /// Whether the descriptor is still open, for ``withOpenDescriptor(_:)``: a lock of its
    /// own, never held while waiting, so reading an option does not wait behind a write
    /// the other end holds back (the output lock is held through that wait).
    private let lifetime = Lock(true)
    /// Past this many bytes waiting, coalesced frames are written at once.
    static let coalescingLimit = 16 * 1024
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
        fd: Int32, spec: TransportSpec?, name: String, isSocket: Bool, eioIsEndOfFile: Bool = false,
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
        self.isSocket = isSocket
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

    /// Starts the reader. `coalescingWrites` (a byte stream, whose frames need not go one
    /// per write) holds what is written while a chunk is handled until the handler
    /// returns, then writes it at once within that timeout; a failure of that write ends
    /// the loop with it.
    package func start(
        chunk: @escaping ChunkHandler, closed: @escaping @Sendable (TransportError?) -> Void, coalescingWrites: Duration? = nil
    ) throws(TransportError) {
        let failure: TransportError? = state.withLock { state in
            if state.closeRequested { return .notOpen(spec: name) }
            if state.started { return .alreadyStarted(spec: name) }
            switch PosixThread.start({ self.run(chunk: chunk, closed: closed, coalescingWrites: coalescingWrites) }) {
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

    /// Writes `bytes` whole, as one frame, within `timeout` (from the reader thread while
    /// it coalesces: queues it, see `Output`).
    package func write(_ bytes: UnsafeRawBufferPointer, timeout: Duration) throws(TransportError) {
        let failure: TransportError? = output.withLock { output in
            guard output.open, !closing.load(ordering: .relaxed) else { return .notOpen(spec: name) }
            guard let reader = output.coalescingThread, pthread_equal(reader, pthread_self()) != 0 else {
                return writePending(&output, timeout: timeout) ?? writeLocked(bytes, timeout: timeout)
            }
            output.pending.append(contentsOf: bytes)
            return output.pending.count >= Self.coalescingLimit ? writePending(&output, timeout: timeout) : nil
        }
        if let failure { throw failure }
    }

    /// The reader starts coalescing (before handing a chunk to the handler).
    private func beginCoalescing() {
        output.withLock { $0.coalescingThread = pthread_self() }
    }

    /// The reader stops coalescing and writes what waits.
    private func endCoalescing(timeout: Duration) -> TransportError? {
        output.withLock { output in
            output.coalescingThread = nil
            guard output.open else {
                output.pending.removeAll()
                return nil
            }
            return writePending(&output, timeout: timeout)
        }
    }

    private func writePending(_ output: inout Output, timeout: Duration) -> TransportError? {
        guard !output.pending.isEmpty else { return nil }
        defer { output.pending.removeAll(keepingCapacity: output.pending.capacity <= Self.coalescingLimit * 2) }
        return output.pending.withUnsafeBytes { writeLocked($0, timeout: timeout) }
    }

    /// Writes `bytes` whole; the output lock is held.
    private func writeLocked(_ bytes: UnsafeRawBufferPointer, timeout: Duration) -> TransportError? {
        let deadline = MonotonicClock.nanoseconds() &+ Posix.nanoseconds(timeout)
        do throws(Posix.WriteFailure) {
            try Posix.writeAll(fd, bytes, until: deadline, isSocket: isSocket)
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
        var one: UInt8 = 1
        _ = Glibc.write(wakeWrite, &one, 1)
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
        output.withLock { output in
            lifetime.withLock { open in
                if open {
                    // A socket's duplicate (a security wait's) would keep it, and its link,
                    // alive past the close: shutdown ends it for every descriptor of it.
                    if isSocket { _ = shutdown(fd, Int32(SHUT_RDWR)) }
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

    private func run(chunk: ChunkHandler, closed: @Sendable (TransportError?) -> Void, coalescingWrites: Duration?) {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: readSize)
        defer { buffer.deallocate() }
        var deadline: UInt64?
        var failure: TransportError?
        // Until then the reader tries reads without sleeping (ReaderWait.spinning).
        var spinUntil: UInt64 = 0
        loop: while !closing.load(ordering: .acquiring) {
            var outcome = ReadOutcome.wouldBlock
            var now = MonotonicClock.nanoseconds()
            if now < spinUntil {
                outcome = readOnce(into: buffer)
                if case .wouldBlock = outcome {
                    if let due = deadline, now >= due { deadline = chunk(nil, now) }
                    continue
                }
            } else {
                var entries = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                let timeout = deadline.map { Posix.pollTimeout(until: $0) } ?? -1
                let ready = poll(&entries, 2, timeout)
                if ready < 0 {
                    if errno == EINTR { continue }
                    failure = TransportError.from(errno: errno, operation: .read, spec: spec)
                    break
                }
                if ready == 0 {
                    deadline = chunk(nil, MonotonicClock.nanoseconds())
                    continue
                }
                if entries[1].revents != 0 { break }
                guard entries[0].revents != 0 else { continue }
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
                if coalescingWrites != nil { beginCoalescing() }
                ReaderChunk.begin()
                deadline = chunk(UnsafeBufferPointer(rebasing: buffer[0..<count]), stamp).map { $0 &+ (now &- stamp) }
                // What the handler put off (waking consumers) runs before the coalesced
                // write, so anything it sends joins that write.
                ReaderChunk.end()
                if let timeout = coalescingWrites, let error = endCoalescing(timeout: timeout) {
                    failure = error
                    break loop
                }
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
        releaseDescriptor()
        closed(failure)
    }
}
