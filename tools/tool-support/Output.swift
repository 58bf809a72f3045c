import Glibc
import Synchronization

/// Writes everything to stdout unbuffered, so a pipe sees each line as it happens.
public func writeOut(_ text: String) { writeAll(Array(text.utf8), to: 1) }

/// Writes `bytes` to stdout in as few write() calls as the pipe allows: output gathered
/// for a whole batch goes out at once.
public func writeOut(_ bytes: [UInt8]) { writeAll(bytes, to: 1) }

/// Writes to stderr unbuffered and without adding a newline: a prompt the user answers on
/// the same line. Results stay on stdout, so `--json` output is never mixed with questions.
public func writePrompt(_ text: String) { writeAll(Array(text.utf8), to: 2) }

/// A write to stdout failed with EPIPE: its reader is gone for good, and said so once.
private let stdoutClosed = Atomic(false)

private func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0, errno == EINTR { continue }
        if written < 0, errno == EPIPE, descriptor == 1, !stdoutClosed.exchange(true, ordering: .relaxed) {
            StopRequest.outputClosed()
        }
        if written <= 0 { return }
        offset += written
    }
}

extension String {
    /// Left-aligned in a column of `width` characters, for the tables the tools draw.
    public func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
