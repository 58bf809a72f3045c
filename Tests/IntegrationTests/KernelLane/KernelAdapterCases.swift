import BluetoothCore
import Glibc
import Foundation
import HCITransport
import Synchronization
import Testing
import TestSupport

/// Adapter management without a daemon, in the lane's guest: the list (HCIGETDEVLIST,
/// HCIGETDEVINFO) shows both vhci controllers with their addresses, up and down work, and
/// `bareble-central adapters` prints the same.
enum KernelAdapterCases {
    static func listAndPower() async throws {
        // Addresses are known once the kernel has brought an adapter up.
        try Adapters.bringUp(index: 0)
        try Adapters.bringUp(index: 1)
        let adapters = try Adapters.list()
        let hci0 = try #require(adapters.first { $0.index == 0 }, "\(adapters)")
        let hci1 = try #require(adapters.first { $0.index == 1 }, "\(adapters)")
        try #require(hci0.address == KernelGuest.hci0Address && hci1.address == KernelGuest.hci1Address, "\(adapters)")
        try #require(hci0.bus == .virtual && hci0.isPrimary && hci0.name == "hci0", "\(hci0)")

        try Adapters.bringUp(index: 1)
        try #require(try Adapters.list().first { $0.index == 1 }?.isUp == true)
        try Adapters.bringUp(index: 1)  // already up: fine
        try Adapters.bringDown(index: 1)
        try #require(try Adapters.list().first { $0.index == 1 }?.isUp == false)
        try Adapters.bringUp(index: 1)

        let tool = try await runTool(["adapters"])
        try #require(tool.status == 0, "\(tool.errors)")
        try #require(tool.output.contains("hci0") && tool.output.contains("F0:0D:00:00:02:00"), "\(tool.output)")
        try #require(tool.output.contains("hci1") && tool.output.contains("F0:0D:00:00:02:01"), "\(tool.output)")
        let down = try await runTool(["adapters", "--down", "1"])
        try #require(down.status == 0, "\(down.errors)")
        try #require(try Adapters.list().first { $0.index == 1 }?.isUp == false)
        let up = try await runTool(["adapters", "--up", "1", "--json"])
        try #require(up.status == 0, "\(up.errors)")
        try #require(up.output.contains("\"index\":1") || up.output.contains("\"index\": 1"), "\(up.output)")
        try #require(try Adapters.list().first { $0.index == 1 }?.isUp == true)
        let missing = try await runTool(["adapters", "--up", "7"])
        try #require(missing.status != 0 && missing.errors.contains("there is no adapter hci7"), "\(missing.errors)")
    }

    /// Runs the built bareble-central to its exit, with its output in files of the job
    /// folder.
    static func runTool(_ arguments: [String], input: String? = nil) async throws -> CentralTool.Run {
        let started = ContinuousClock.now
        let run = try await onOwnThread { try startTool(arguments, input: input).finishBlocking() }
        print("kernel guest: `bareble-central \(arguments.joined(separator: " "))` exit \(run.status) after \(ContinuousClock.now - started)")
        return run
    }

    /// Starts the built bareble-central; `finish()` waits for its exit. Not Foundation's
    /// Process: in the guest its run loop cannot create its wake-up socket pair and the
    /// child is never waited for.
    /// `input`: what the tool reads on stdin (a user's typed answers), else /dev/null.
    static func startTool(_ arguments: [String], input: String? = nil) throws -> GuestTool {
        let serial = toolRuns.add(1, ordering: .relaxed).newValue
        let output = KernelGuest.jobDirectory + "/tool-\(getpid())-\(serial)-out.txt"
        let errors = KernelGuest.jobDirectory + "/tool-\(getpid())-\(serial)-err.txt"
        var stdin = "/dev/null"
        if let input {
            stdin = KernelGuest.jobDirectory + "/tool-\(getpid())-\(serial)-in.txt"
            try input.write(toFile: stdin, atomically: true, encoding: .utf8)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([CentralTool.executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, CentralTool.executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw KernelCaseFailure("cannot run \(CentralTool.executable): errno \(spawned)") }
        return GuestTool(pid: pid, output: output, errors: errors)
    }

    private static let toolRuns = Atomic(0)
}

/// A bareble-central started in the guest.
struct GuestTool: Sendable {
    let pid: pid_t
    let output: String
    let errors: String

    /// Waits (on a thread of its own) for the tool's exit; its status and output.
    func finish() async throws -> CentralTool.Run {
        try await onOwnThread { finishBlocking() }
    }

    func finishBlocking() -> CentralTool.Run {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return CentralTool.Run(
            status: exitStatus,
            output: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }
}
