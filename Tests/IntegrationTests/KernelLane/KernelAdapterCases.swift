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

    /// Starts the built bareble-central (or `executable`); `finish()` waits for its exit.
    /// Not Foundation's Process: in the guest its run loop cannot create its wake-up
    /// socket pair and the child is never waited for.
    /// `input`: what the tool reads on stdin (a user's typed answers), else /dev/null.
    /// `interactive`: stdin and stdout are pipes instead, for ``GuestTool/type(_:)`` and
    /// ``GuestTool/next(_:timeout:where:)`` while the tool runs.
    static func startTool(
        _ arguments: [String], input: String? = nil, executable: String = CentralTool.executable, interactive: Bool = false
    ) throws -> GuestTool {
        let serial = toolRuns.add(1, ordering: .relaxed).newValue
        let output = KernelGuest.jobDirectory + "/tool-\(getpid())-\(serial)-out.txt"
        let errors = KernelGuest.jobDirectory + "/tool-\(getpid())-\(serial)-err.txt"
        var stdin = "/dev/null"
        if let input {
            stdin = KernelGuest.jobDirectory + "/tool-\(getpid())-\(serial)-in.txt"
            try input.write(toFile: stdin, atomically: true, encoding: .utf8)
        }
        // [read, write] of the tool's stdin and of its stdout. ChildProcess hands the child
        // its ends as 0 and 1 and closes every other descriptor in it, so tools started
        // meanwhile never hold these (the reader would never see the end).
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        if interactive {
            guard pipe(&inputPipe) == 0 else { throw KernelCaseFailure("pipe: errno \(errno)") }
            guard pipe(&outputPipe) == 0 else {
                inputPipe.forEach { Glibc.close($0) }
                throw KernelCaseFailure("pipe: errno \(errno)")
            }
        }
        let childIn = interactive ? inputPipe[0] : open(stdin, O_RDONLY | O_CLOEXEC)
        let childOut = interactive ? outputPipe[1] : open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let childErrors = open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let spawned = Result { () throws(ChildProcess.Failure) in
            try ChildProcess.spawn([executable] + arguments, stdin: childIn, stdout: childOut, stderr: childErrors)
        }
        // The child's ends are its own now.
        [childIn, childOut, childErrors].filter { $0 >= 0 }.forEach { Glibc.close($0) }
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(let failure):
            if interactive { [inputPipe[1], outputPipe[0]].forEach { Glibc.close($0) } }
            throw KernelCaseFailure(failure.description)
        }
        let lines = interactive ? GuestToolLines(reading: outputPipe[0]) : nil
        return GuestTool(pid: pid, output: output, errors: errors, input: interactive ? inputPipe[1] : nil, lines: lines)
    }

    private static let toolRuns = Atomic(0)
}

/// A bareble-central (or another built tool) started in the guest.
struct GuestTool: Sendable {
    let pid: pid_t
    let output: String
    let errors: String
    /// The write end of an interactive tool's stdin.
    var input: Int32? = nil
    /// An interactive tool's stdout, line by line as it comes.
    var lines: GuestToolLines? = nil

    /// Waits (on a thread of its own) for the tool's exit; its status and output.
    func finish() async throws -> CentralTool.Run {
        try await onOwnThread { finishBlocking() }
    }

    /// ``finish()``, for a tool that ends by itself (`subscribe --count N`): killed, and a
    /// failure naming `what`, when it has not ended within `timeout`.
    func finish(within timeout: Duration, _ what: String) async throws -> CentralTool.Run {
        try await withThrowingTaskGroup(of: CentralTool.Run?.self) { group in
            group.addTask { try await finish() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let run = try await group.next() ?? nil else {
                kill(pid, SIGKILL)
                throw KernelCaseFailure("\(what) did not end within \(timeout)")
            }
            return run
        }
    }

    func finishBlocking() -> CentralTool.Run {
        if let input { Glibc.close(input) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return CentralTool.Run(
            status: exitStatus,
            output: lines?.all(waitingForEnd: .seconds(5)).joined(separator: "\n") ?? (try? String(contentsOfFile: output, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// Writes `line` and a newline to an interactive tool's stdin (a user typing).
    func type(_ line: String) throws {
        guard let input else { throw KernelCaseFailure("the tool was not started interactive") }
        let bytes = Array((line + "\n").utf8)
        guard write(input, bytes, bytes.count) == bytes.count else { throw KernelCaseFailure("writing to the tool's stdin: errno \(errno)") }
    }

    /// The next JSON line of an interactive tool (after those already returned) that
    /// satisfies `predicate`.
    func next(_ what: String, timeout: Duration = .seconds(30), where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> [String: Any] {
        guard let lines else { throw KernelCaseFailure("the tool was not started interactive") }
        return try await onOwnThread { try lines.nextBlocking(what, timeout: timeout, where: predicate) }.object
    }
}

/// One JSON line, handed from the reading thread to the test.
struct GuestToolLine: @unchecked Sendable {
    var object: [String: Any]
}

/// An interactive tool's stdout, read by a thread of its own into lines.
final class GuestToolLines: @unchecked Sendable {
    // Guarded by `condition`.
    private var lines: [String] = []
    private var consumed = 0
    private var ended = false
    private let condition = NSCondition()

    init(reading fd: Int32) {
        Thread { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                condition.lock()
                defer { condition.broadcast(); condition.unlock() }
                guard count > 0 else {
                    ended = true
                    Glibc.close(fd)
                    return
                }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
        }.start()
    }

    func nextBlocking(_ what: String, timeout: Duration, where predicate: ([String: Any]) -> Bool) throws -> GuestToolLine {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while true {
            while consumed < lines.count {
                let line = lines[consumed]
                consumed += 1
                if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], predicate(object) {
                    return GuestToolLine(object: object)
                }
            }
            if ended || !condition.wait(until: deadline) {
                throw KernelCaseFailure("no line \(what) from the tool in \(timeout); its output: \(lines.suffix(12).joined(separator: "\n"))")
            }
        }
    }

    /// Every line, once the tool's stdout ended (or after `timeout`).
    func all(waitingForEnd timeout: Duration) -> [String] {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
        condition.lock()
        defer { condition.unlock() }
        while !ended, condition.wait(until: deadline) {}
        return lines
    }
}
