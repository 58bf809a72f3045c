import BluetoothCore
import Dispatch
import Glibc
import HCITransport

/// `--exec CMD`: runs `/bin/sh -c CMD` once per notification with its JSON line on stdin,
/// one at a time on a queue of its own, so a slow command never holds up the radio.
/// At most ``limit`` runs wait; past that a notification's run is skipped and counted
/// (`skipped`), since a burst of notifications must not become a burst of processes.
/// A run that could not start (no pipe, no process) is counted (`failed`) and told to
/// `failure` with the reason, on the runner's queue.
final class ExecRunner: Sendable {
    static let limit = 64

    let command: String
    private let shell: String
    private let failure: @Sendable (_ reason: String, _ failed: Int) -> Void
    private let queue = DispatchQueue(label: "bareble-ancs.exec")
    private let waiting = Lock(0)
    private let skippedRuns = Lock(0)
    private let failedRuns = Lock(0)

    init(command: String, shell: String = "/bin/sh", failure: @escaping @Sendable (_ reason: String, _ failed: Int) -> Void) {
        self.command = command
        self.shell = shell
        self.failure = failure
    }

    var skipped: Int { skippedRuns.withLock { $0 } }
    var failed: Int { failedRuns.withLock { $0 } }

    /// Queues a run; false when the queue was full and this run was skipped.
    @discardableResult
    func run(input: String) -> Bool {
        let admitted = waiting.withLock { count in
            guard count < Self.limit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            skippedRuns.withLock { $0 += 1 }
            return false
        }
        queue.async { [self] in
            if let reason = Self.spawn(shell, command, input: Array(input.utf8)) {
                failure(reason, failedRuns.withLock { $0 += 1; return $0 })
            }
            waiting.withLock { $0 -= 1 }
        }
        return true
    }

    /// Waits until the runs queued so far have ended, or `seconds` passed (a command that
    /// hangs must not hold the tool's exit forever). False when some were still running.
    func finish(within seconds: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Spawns the shell with a pipe on its stdin, writes `input`, closes, and reaps it.
    /// The command starts as from a shell: no signal blocked or ignored, none of our
    /// descriptors but stdout and stderr (``ChildProcess``). Returns why it could not start.
    private static func spawn(_ shell: String, _ command: String, input: [UInt8]) -> String? {
        guard let pipe = Posix.makePipe() else { return "no pipe for its input: \(Posix.message(errno))" }
        let pid: pid_t
        do { pid = try ChildProcess.spawn([shell, "-c", command], stdin: pipe.read) } catch {
            close(pipe.read)
            close(pipe.write)
            return error.description
        }
        close(pipe.read)
        var offset = 0
        while offset < input.count {
            let written = input.withUnsafeBytes { write(pipe.write, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { break }
            offset += written
        }
        close(pipe.write)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return nil
    }
}
