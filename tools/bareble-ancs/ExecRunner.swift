import BluetoothCore
import Dispatch
import Glibc

/// `--exec CMD`: runs `/bin/sh -c CMD` once per notification with its JSON line on stdin,
/// one at a time on a queue of its own, so a slow command never holds up the radio.
/// At most ``limit`` runs wait; past that a notification's run is skipped and counted
/// (`skipped`), since a burst of notifications must not become a burst of processes.
final class ExecRunner: Sendable {
    static let limit = 64

    let command: String
    private let queue = DispatchQueue(label: "bareble-ancs.exec")
    private let waiting = Lock(0)
    private let skippedRuns = Lock(0)

    init(command: String) { self.command = command }

    var skipped: Int { skippedRuns.withLock { $0 } }

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
        let command = command
        queue.async { [waiting] in
            Self.spawn(command, input: Array(input.utf8))
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
    private static func spawn(_ command: String, input: [UInt8]) {
        var pipes: [Int32] = [0, 0]
        guard pipe(&pipes) == 0 else { return }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0], 0)
        posix_spawn_file_actions_addclose(&actions, pipes[1])
        let arguments = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ)
        close(pipes[0])
        if spawned == 0 {
            var offset = 0
            while offset < input.count {
                let written = input.withUnsafeBytes { write(pipes[1], $0.baseAddress! + offset, $0.count - offset) }
                if written < 0, errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        close(pipes[1])
        guard spawned == 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }
}
