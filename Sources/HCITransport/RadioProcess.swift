import BluetoothCore
import Glibc
// Socket constants are declared by whichever clang module (Glibc or CBluetooth, whose
// headers include <sys/socket.h>) is built first; import both so either works.
import CBluetooth

/// Starting, feeding and ending the virtual radio's process.
enum RadioProcess {
    struct Child {
        var pid: pid_t
        /// Our end of its stdin: a socket, so writing after it died is EPIPE, not SIGPIPE.
        var control: Int32
        var stdout: Int32
        var stderr: Int32
    }

    static func spawn(python: String, arguments: [String]) throws(TransportError) -> Child {
        var control: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &control) == 0 else {
            throw .radioFailed(detail: "socketpair: \(Posix.message(errno))")
        }
        guard let output = Posix.makePipe() else {
            closeAll(control)
            throw .radioFailed(detail: "pipe: \(Posix.message(errno))")
        }
        guard let errors = Posix.makePipe() else {
            closeAll(control + [output.read, output.write])
            throw .radioFailed(detail: "pipe: \(Posix.message(errno))")
        }
        // The child reads commands only; we only write them.
        shutdown(control[0], Int32(SHUT_RD))
        _ = Posix.setNonBlocking(control[0])

        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let variable = String(cString: pointer)
            if !variable.hasPrefix("PYTHONUNBUFFERED=") { environment.append(variable) }
            entry += 1
        }
        // Lines must arrive as they are printed, not when a buffer fills.
        environment.append("PYTHONUNBUFFERED=1")

        // Nothing else of ours leaks into the radio (ChildProcess closes the rest): it would
        // hold our sockets and pipes open, and a caller waiting for end-of-file on one would
        // wait for the radio's lifetime.
        let spawned = Result { () throws(ChildProcess.Failure) in
            try ChildProcess.spawn(
                [python] + arguments, environment: environment,
                stdin: control[1], stdout: output.write, stderr: errors.write)
        }
        Glibc.close(control[1])
        Glibc.close(output.write)
        Glibc.close(errors.write)
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(let failure):
            closeAll([control[0], output.read, errors.read])
            throw .radioFailed(detail: "\(failure); install Python 3 or set BAREBLE_PYTHON")
        }
        return Child(pid: pid, control: control[0], stdout: output.read, stderr: errors.read)
    }

    /// Runs on the radio's reader thread until both its stdout and stderr close: stdout
    /// becomes lines, stderr is copied to ours and its tail kept.
    static func pump(stdout: Int32, stderr: Int32, lines: LineChannel, tail: StderrTail) {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 16_384)
        defer { buffer.deallocate() }
        var partial: [UInt8] = []
        var open = [stdout, stderr]
        while !open.isEmpty {
            var entries = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&entries, nfds_t(entries.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for entry in entries where entry.revents != 0 {
                let count = read(entry.fd, buffer.baseAddress, buffer.count)
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else {
                    Glibc.close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                    continue
                }
                let chunk = UnsafeBufferPointer(rebasing: buffer[0..<count])
                if entry.fd == stderr {
                    _ = write(2, chunk.baseAddress, count)
                    tail.append(chunk)
                    continue
                }
                for byte in chunk {
                    if byte == UInt8(ascii: "\n") {
                        lines.push(String(decoding: partial, as: UTF8.self))
                        partial.removeAll(keepingCapacity: true)
                    } else {
                        partial.append(byte)
                    }
                }
            }
        }
        if !partial.isEmpty { lines.push(String(decoding: partial, as: UTF8.self)) }
        lines.finish()
    }

    /// Closes its stdin and waits for it to leave; SIGTERM after 2 s, SIGKILL after 2 s
    /// more; then reaps it.
    static func terminate(_ pid: pid_t, control: Int32, lines: LineChannel) {
        Glibc.close(control)
        let grace: UInt64 = 2_000_000_000
        if !lines.waitForEnd(until: MonotonicClock.nanoseconds() &+ grace) {
            kill(pid, SIGTERM)
            if !lines.waitForEnd(until: MonotonicClock.nanoseconds() &+ grace) {
                kill(pid, SIGKILL)
            }
        }
        _ = reap(pid)
    }

    /// Waits for the process to exit (its stdout has closed, so it is exiting) and
    /// describes how it ended.
    static func reap(_ pid: pid_t) -> String {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return "already reaped" }
        }
        let signal = status & 0x7F
        if signal == 0 { return "status \((status >> 8) & 0xFF)" }
        return "signal \(signal)"
    }

    private static func closeAll(_ fds: [Int32]) {
        for fd in fds where fd >= 0 { Glibc.close(fd) }
    }
}
