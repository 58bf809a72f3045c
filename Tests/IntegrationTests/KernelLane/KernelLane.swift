import Foundation
import Testing
import TestSupport

/// The kernel-socket paths under a real Linux kernel (tools/kernel-lane): one QEMU guest
/// boots per `swift test` run and runs this same suite inside, where every case does its
/// work against the guest kernel's HCI and L2CAP sockets and the Bumble controllers
/// attached through /dev/vhci. On the host each case asserts on what its guest run
/// reported, so every case shows up as passed or failed here, never as skipped.
///
/// When no guest can start on the machine (no QEMU, no kernel package), the cases fail
/// under CI=true and are skipped loudly otherwise.
@Suite(.serialized) struct KernelLane {
    @Test(arguments: KernelGuestCase.allCases)
    func guestCase(_ testCase: KernelGuestCase) async throws {
        if KernelGuest.isInside {
            try await KernelGuest.run(testCase)
            return
        }
        let run = try await KernelLaneRun.shared.result()
        switch run.outcome {
        case .noGuest:
            let message = "KERNEL LANE: NO GUEST COULD START on this machine; \(testCase) did not run. \(run.summary)"
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record(Comment(rawValue: message))
            } else {
                print(message)
                try Test.cancel(Comment(rawValue: message))
            }
            return
        case .timedOut:
            Issue.record("the kernel lane timed out before \(testCase) reported. \(run.summary)")
            return
        case .finished:
            break
        }
        guard let result = run.cases[testCase.rawValue] else {
            Issue.record("the guest never reported \(testCase) (did the test binary crash?). \(run.summary)")
            return
        }
        #expect(result.passed, "in the guest, \(testCase) failed after \(result.seconds) s: \(result.message)\n\(run.summary)")
        if result.passed, let check = testCase.hostCheck {
            try await check(run.jobDirectory)
        }
    }
}

/// One boot of the guest for the whole host run, started by the first case that asks.
actor KernelLaneRun {
    static let shared = KernelLaneRun()

    enum Outcome: Sendable { case finished, timedOut, noGuest }

    struct CaseResult: Sendable {
        var passed: Bool
        var message: String
        var seconds: Double
    }

    struct Result: Sendable {
        var outcome: Outcome
        var exitCode: Int32
        var cases: [String: CaseResult]
        var jobDirectory: String
        var wallSeconds: Double
        /// The end of the lane's output, for failure messages.
        var outputTail: String

        var summary: String {
            "Lane exit code \(exitCode) after \(String(format: "%.1f", wallSeconds)) s; job folder \(jobDirectory); output tail:\n\(outputTail)"
        }
    }

    private var running: Task<Result, any Error>?

    func result() async throws -> Result {
        if let running { return try await running.value }
        let task = Task { try await onOwnThread { try Self.boot() } }
        running = task
        return try await task.value
    }

    /// Exit codes of tools/kernel-lane/lane.sh.
    static let exitTimedOut: Int32 = 124
    static let exitNoGuest: Int32 = 125

    static func boot() throws -> Result {
        let repository = try KernelGuest.repositoryRoot()
        let job = TestScratch.root + "/kernel-lane"
        try? FileManager.default.removeItem(atPath: job)
        try FileManager.default.createDirectory(atPath: job, withIntermediateDirectories: true)
        let logPath = job + "/lane.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? log.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: repository + "/tools/kernel-lane/lane.sh")
        process.arguments = ["--job-dir", job, "--tests"]
        var environment = ProcessInfo.processInfo.environment
        // The guest runs this very test binary.
        environment["BAREBLE_TEST_BUNDLE"] = KernelGuest.testBundlePath()
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        let started = Date()
        // With no signal blocked: QEMU must receive the SIGTERM the lane stops it with.
        try process.runWithSignalsUnblocked()
        process.waitUntilExit()
        let wall = Date().timeIntervalSince(started)

        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = output.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
        let code = process.terminationStatus
        let outcome: Outcome = switch code {
        case exitNoGuest: .noGuest
        case exitTimedOut: .timedOut
        default: .finished
        }
        var cases: [String: CaseResult] = [:]
        let results = (try? String(contentsOfFile: job + "/" + KernelGuest.resultsFile, encoding: .utf8)) ?? ""
        for line in results.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let name = object["case"] as? String
            else { continue }
            cases[name] = CaseResult(
                passed: object["passed"] as? Bool ?? false,
                message: object["message"] as? String ?? "",
                seconds: object["seconds"] as? Double ?? 0)
        }
        // .ci/run checks this line: every case of the enum reported by the guest.
        let reported = KernelGuestCase.allCases.filter { cases[$0.rawValue] != nil }.count
        print("kernel lane: exit \(code), \(reported)/\(KernelGuestCase.allCases.count) guest cases reported, wall time \(String(format: "%.1f", wall)) s (log: \(logPath))")
        return Result(outcome: outcome, exitCode: code, cases: cases, jobDirectory: job, wallSeconds: wall, outputTail: tail)
    }
}
