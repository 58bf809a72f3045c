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
    /// Held while writing and while closing the descriptor; false once it is closed.
    private let descriptorOpen = Lock(true)
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
        state.withLock { state in
            if let thread = state.thread, !state.closeRequested { pthread_detach(thread) }
        }
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    package func start(chunk: @escaping ChunkHandler, closed: @escaping @Sendable (TransportError?) -> Void) throws(TransportError) {
        let failure: TransportError? = state.withLock { state in
            if state.closeRequested { return .notOpen(spec: name) }
            if state.started { return .alreadyStarted(spec: name) }
            switch PosixThread.start({ self.run(chunk: chunk, closed: closed) }) {
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

    /// Writes `bytes` whole, as one frame, within `timeout`.
    package func write(_ bytes: UnsafeRawBufferPointer, timeout: Duration) throws(TransportError) {
        let deadline = MonotonicClock.nanoseconds() &+ Posix.nanoseconds(timeout)
        let failure: TransportError? = descriptorOpen.withLock { open in
            guard open, !closing.load(ordering: .relaxed) else { return .notOpen(spec: name) }
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
        if let failure { throw failure }
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

    /// For the chunk handler of a loop made with `kernelTimestamps`: when the kernel queued
    /// the datagram being handled, in nanoseconds since the Unix epoch; nil when it gave none.
    package var kernelTimestamp: Int64? {
        let value = kernelTime.load(ordering: .relaxed)
        return value < 0 ? nil : value
    }

    private func releaseDescriptor() {
        descriptorOpen.withLock { open in
            if open { Glibc.close(fd) }
            open = false
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

    private func run(chunk: ChunkHandler, closed: @Sendable (TransportError?) -> Void) {
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
                deadline = chunk(UnsafeBufferPointer(rebasing: buffer[0..<count]), stamp).map { $0 &+ (now &- stamp) }
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
