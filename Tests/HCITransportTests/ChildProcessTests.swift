import Foundation
import Glibc
@testable import HCITransport
import Testing
import TestSupport

/// What a spawned child (the virtual radio, `bareble-ancs --exec`'s command, the bench's
/// tool) starts with: what a shell would give it, whatever thread of ours spawned it.
@Suite struct ChildProcessTests {
    /// What `arguments` prints, spawned from a thread that blocks SIGTERM and SIGINT and
    /// ignores SIGPIPE: what Swift's worker threads and our tools do.
    static func output(of arguments: [String]) throws -> String {
        var pipeEnds: [Int32] = [-1, -1]
        try #require(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]) }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGINT)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        let spawned = Result { () throws(ChildProcess.Failure) in try ChildProcess.spawn(arguments, stdout: pipeEnds[1]) }
        signal(SIGPIPE, previousPipe)
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        close(pipeEnds[1])
        let pid = try spawned.get()
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += buffer[0..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }

    /// SigBlk and SigIgn of a child (grep, which keeps the mask it was given: a shell
    /// would clear it).
    static func childSignals() throws -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        for line in try output(of: ["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"]).split(separator: "\n") {
            let fields = line.split(separator: ":")
            guard fields.count == 2 else { continue }
            result[String(fields[0])] = UInt64(fields[1].filter { !$0.isWhitespace }, radix: 16)
        }
        return result
    }

    static func bit(_ signal: Int32) -> UInt64 { 1 << UInt64(signal - 1) }

    @Test("a child starts with no signal blocked and SIGPIPE, SIGINT, SIGTERM at their defaults")
    func childStartsWithShellSignals() throws {
        let state = try Self.childSignals()
        let blocked = try #require(state["SigBlk"])
        let ignored = try #require(state["SigIgn"])
        #expect(blocked == 0, "blocked in the child: \(String(blocked, radix: 16))")
        for signal in [SIGPIPE, SIGINT, SIGTERM] {
            #expect(ignored & Self.bit(signal) == 0, "signal \(signal) ignored in the child")
        }
    }

    @Test("a child inherits none of our descriptors beyond 0, 1 and 2, close-on-exec or not")
    func childGetsNoDescriptorOfOurs() throws {
        let null = open("/dev/null", O_RDONLY)
        try #require(null >= 0)
        let extra = fcntl(null, F_DUPFD, 200)  // without FD_CLOEXEC: only closing stops it
        close(null)
        try #require(extra >= 200)
        defer { close(extra) }
        let descriptors = try Self.output(of: ["ls", "/proc/self/fd"]).split(separator: "\n")
        #expect(!descriptors.contains("\(extra)"), "the child holds descriptor \(extra): \(descriptors)")
    }

    @Test("the tests' Foundation Process, started with runWithSignalsUnblocked, starts its child with no signal blocked")
    func testProcessesStartUnblocked() throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/grep")
        process.arguments = ["^SigBlk:", "/proc/self/status"]
        let output = Pipe()
        process.standardOutput = output
        try process.runWithSignalsUnblocked()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let mask = UInt64(text.split(separator: ":").last?.filter { !$0.isWhitespace } ?? "", radix: 16)
        #expect(mask == 0, "\(text)")
    }

    @Test("a program that is not there is a thrown error naming it, not a child")
    func missingProgramThrows() {
        #expect(throws: ChildProcess.Failure.self) {
            _ = try ChildProcess.spawn(["/nonexistent/bareble-no-such-program"])
        }
    }
}
