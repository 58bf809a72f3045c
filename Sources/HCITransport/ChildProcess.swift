import Glibc
import CBluetooth

/// Starting another program: the virtual radio, `bareble-ancs --exec`'s command, the
/// benchmark's tool.
///
/// The child starts as a shell would start it, whichever of our threads spawns it:
/// - no signal blocked: posix_spawn passes on the calling thread's mask, and Swift's
///   worker threads block SIGTERM, SIGINT and most others, so a child spawned from async
///   code would never see a SIGTERM (a `timeout` in a user's `--exec` script, QEMU told to
///   stop);
/// - every signal at its default action (our tools ignore SIGPIPE);
/// - none of our descriptors beyond 0, 1 and 2, whether or not they are close-on-exec:
///   a child holding one of our sockets or pipes would keep it open for its lifetime.
package enum ChildProcess {
    package struct Failure: Error, CustomStringConvertible {
        package var program: String
        package var code: Int32
        package var description: String { "cannot run \(program): \(Posix.message(code))" }
    }

    /// Spawns `arguments[0]` (looked up in PATH when it has no slash) with `stdin`,
    /// `stdout` and `stderr` as its descriptors 0, 1 and 2 (nil: ours), and `environment`
    /// (nil: ours). Returns its pid; the caller reaps it.
    package static func spawn(
        _ arguments: [String], environment: [String]? = nil,
        stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil
    ) throws(Failure) -> pid_t {
        precondition(!arguments.isEmpty, "ChildProcess.spawn needs a program")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            if let source { posix_spawn_file_actions_adddup2(&actions, source, target) }
        }
        bareble_spawn_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let environmentCopy = environment?.map { strdup($0) }
        defer { environmentCopy?.forEach { free($0) } }

        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            if let environmentCopy {
                return (environmentCopy + [nil]).withUnsafeBufferPointer { environmentBuffer in
                    posix_spawnp(&pid, arguments[0], &actions, &attributes, argvBuffer.baseAddress!, environmentBuffer.baseAddress!)
                }
            }
            return posix_spawnp(&pid, arguments[0], &actions, &attributes, argvBuffer.baseAddress!, environ)
        }
        guard result == 0 else { throw Failure(program: arguments[0], code: result) }
        return pid
    }
}
