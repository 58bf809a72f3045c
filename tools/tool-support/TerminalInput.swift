import BluetoothCore
import Dispatch
import Glibc

/// Lines typed on standard input, each read with a deadline: pairing must answer before the
/// SMP timer (30 s) ends it, so a prompt nobody answers, or a closed stdin, has to give up
/// on its own rather than block the pairing until the peer times out.
public final class TerminalInput: Sendable {
    public enum Answer: Sendable, Equatable {
        case line(String)
        /// End of file: nothing will ever be typed (stdin is /dev/null, a closed pipe, Ctrl-D).
        case closed
        /// Nothing typed before the deadline.
        case timedOut
    }

    public static let shared = TerminalInput()

    private struct Buffer {
        var pending: [UInt8] = []
        var closed = false
    }

    private let buffer = Lock(Buffer())
    /// Reads block a thread for up to the deadline: one of Dispatch's, never one of the two
    /// cooperative threads SMP's own tasks run on.
    private let queue = DispatchQueue(label: "bareble.stdin")

    /// Hands each line typed to `perform`, trimmed, until stdin closes or the task is
    /// cancelled. Each read waits at most a second, so a pairing question asked meanwhile
    /// gets the next line typed: how the tools take commands on stdin while they run.
    public func commands(_ perform: (String) async -> Void) async {
        while !Task.isCancelled {
            switch await line(within: .seconds(1)) {
            case .closed: return
            case .timedOut: continue
            case let .line(text): await perform(text.trimmingWhitespace)
            }
        }
    }

    /// The next line (without its newline), or why there is none by `timeout`.
    public func line(within timeout: Duration) async -> Answer {
        let deadline = ContinuousClock.now + timeout
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.readLine(until: deadline)) }
        }
    }

    private func readLine(until deadline: ContinuousClock.Instant) -> Answer {
        while true {
            if let answer = takeLine() { return answer }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .timedOut }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            if ready == 0 { continue }  // the loop checks the deadline
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            buffer.withLock { buffer in
                if count <= 0 { buffer.closed = true } else { buffer.pending += chunk[0..<count] }
            }
        }
    }

    /// A complete line from what was read; at the end of input, the unterminated rest, then
    /// `.closed` for good.
    private func takeLine() -> Answer? {
        buffer.withLock { buffer in
            if let newline = buffer.pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer.pending[..<newline], as: UTF8.self)
                buffer.pending.removeSubrange(...newline)
                return .line(line)
            }
            guard buffer.closed else { return nil }
            if buffer.pending.isEmpty { return .closed }
            defer { buffer.pending = [] }
            return .line(String(decoding: buffer.pending, as: UTF8.self))
        }
    }
}
