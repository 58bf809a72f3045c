import BluetoothCore
import Glibc
// Socket constants are declared by whichever clang module (Glibc or CBluetooth, whose
// headers include <sys/socket.h>) is built first; import both so either works.
import CBluetooth

/// Small wrappers over the system calls the transports share.
package enum Posix {

    /// Milliseconds left until `deadline` for poll(), rounded up, at least 0.
    package static func pollTimeout(until deadline: UInt64) -> Int32 {
        let now = MonotonicClock.nanoseconds()
        guard deadline > now else { return 0 }
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    package static func setNonBlocking(_ fd: Int32) -> Int32? {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return errno }
        return nil
    }

    /// Waits until `fd` has `events` or the deadline passes. Returns the revents, 0 on
    /// timeout, or a negative errno.
    package static func wait(_ fd: Int32, for events: Int16, until deadline: UInt64) -> Int32 {
        while true {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, pollTimeout(until: deadline))
            if ready > 0 { return Int32(entry.revents) }
            if ready == 0 { return 0 }
            if errno != EINTR { return -errno }
        }
    }

    package enum WriteFailure: Error {
        case errno(Int32)
        case timedOut
    }

    /// What a descriptor is, as far as writing it goes: where the reader can go away, a
    /// write must end in EPIPE, never in the SIGPIPE that ends the process.
    package enum WriteTarget: Sendable {
        /// Written with send(MSG_NOSIGNAL).
        case socket
        /// A pipe or FIFO: SIGPIPE is blocked on the writing thread for the write, and one
        /// the write raised is taken back.
        case pipe
        /// A regular file, a tty, a serial port: no SIGPIPE to fear.
        case other

        package init(fd: Int32) {
            var status = stat()
            switch fstat(fd, &status) == 0 ? status.st_mode & S_IFMT : 0 {
            case S_IFSOCK: self = .socket
            case S_IFIFO: self = .pipe
            default: self = .other
            }
        }
    }

    /// Writes what a non-blocking `fd` takes of `bytes` now, riding out EINTR: the count
    /// taken, 0 when it takes nothing without waiting, or a negative errno.
    package static func writeSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, to target: WriteTarget) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        while true {
            let written = switch target {
            case .socket: send(fd, base, bytes.count, Int32(MSG_NOSIGNAL))
            case .pipe: writeWithoutSIGPIPE(fd, base, bytes.count)
            case .other: write(fd, base, bytes.count)
            }
            if written > 0 { return written }
            let code = written < 0 ? errno : EIO
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? 0 : -Int(code)
        }
    }

    /// write() to a pipe with SIGPIPE blocked on this thread: a reader that went away is
    /// EPIPE. The signal the write raised stays pending on the thread, so it is taken
    /// back before the mask is restored (unless one was pending already, not ours).
    private static func writeWithoutSIGPIPE(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) -> Int {
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        var pending = sigset_t()
        sigpending(&pending)
        let alreadyPending = sigismember(&pending, SIGPIPE) == 1
        let written = write(fd, base, count)
        let code = errno
        if written < 0, code == EPIPE, !alreadyPending {
            var now = timespec()
            _ = sigtimedwait(&pipeOnly, nil, &now)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        errno = code
        return written
    }

    /// Writes all of `bytes` to a non-blocking `fd`, riding out EINTR, EAGAIN and short
    /// writes, until `deadline`.
    package static func writeAll(
        _ fd: Int32, _ bytes: UnsafeRawBufferPointer, until deadline: UInt64, to target: WriteTarget
    ) throws(WriteFailure) {
        var offset = 0
        while offset < bytes.count {
            let written = writeSome(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]), to: target)
            if written < 0 { throw .errno(Int32(-written)) }
            offset += written
            if written > 0 { continue }
            let revents = wait(fd, for: Int16(POLLOUT), until: deadline)
            if revents == 0 { throw .timedOut }
            if revents < 0 { throw .errno(-revents) }
        }
    }

    /// The text of an errno, e.g. "Connection refused".
    package static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }

    /// A pipe whose write end wakes a poll() on the read end; both ends non-blocking.
    package static func makeWakePipe() -> (read: Int32, write: Int32)? {
        guard let ends = makePipe() else { return nil }
        for fd in [ends.read, ends.write] where setNonBlocking(fd) != nil {
            Glibc.close(ends.read)
            Glibc.close(ends.write)
            return nil
        }
        return ends
    }

    /// A pipe, both ends close-on-exec.
    package static func makePipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        return (ends[0], ends[1])
    }
}
