import Foundation
import HCITransport

/// One virtual radio for one test suite: started on first use, stopped when the suite's
/// process exits (the radio ends itself when its stdin closes, so a crashed test run
/// cannot leave it behind). Control lines are acknowledged; the event log is searchable.
public final class RadioHarness: Sendable {
    public let radio: VirtualRadio
    /// Where the radio writes one btsnoop per exposed controller (kept for failed runs).
    public let captureDirectory: String

    /// `readyTimeout`: how long the radio may take to print its ready line (in the kernel
    /// lane's TCG guest, Python and Bumble alone take several seconds to start).
    public init(arguments: [String], readyTimeout: Duration = .seconds(15)) throws {
        _ = TestLogging.quiet
        let directory = TestScratch.path("radio")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        captureDirectory = directory
        radio = try VirtualRadio.launch(arguments: arguments + ["--btsnoop", directory], readyTimeout: readyTimeout)
    }

    /// Skips event lines until one named `name` satisfies `predicate`. Waits on a thread of
    /// its own: a blocked cooperative thread would stall other suites' async tests (the pool
    /// has one thread per core, two on CI).
    @discardableResult
    public func waitForEvent(
        _ name: String, timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable ([String: Any]) -> Bool = { _ in true }
    ) async throws -> [String: Any] {
        try await onOwnThread { RadioEventObject(object: try self.waitForEventBlocking(name, timeout: timeout, where: predicate)) }.object
    }

    /// ``waitForEvent(_:timeout:where:)`` on the calling thread, for code that already runs
    /// on a thread of its own.
    @discardableResult
    public func waitForEventBlocking(
        _ name: String, timeout: Duration = .seconds(10),
        where predicate: ([String: Any]) -> Bool = { _ in true }
    ) throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw HarnessError.noEvent(name) }
            let line = try radio.nextLine(timeout: remaining)
            guard let data = line.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { continue }
            if object["event"] as? String == "error" { throw HarnessError.radioRefused(line) }
            if object["event"] as? String == name, predicate(object) { return object }
        }
    }

    /// Sends a control line and waits for the radio's acknowledgement (on its own thread).
    public func control(_ line: String) async throws {
        try await onOwnThread { try self.controlBlocking(line) }
    }

    /// ``control(_:)`` on the calling thread.
    public func controlBlocking(_ line: String) throws {
        try radio.send(controlLine: line)
        try waitForEventBlocking("ack")
    }

    /// The radio's client id for the exposed controller whose address is `address`.
    public func clientID(address: String) async throws -> Int {
        let event = try await waitForEvent("client") { ($0["address"] as? String)?.hasPrefix(address) == true }
        guard let id = event["id"] as? Int else { throw HarnessError.noEvent("client id") }
        return id
    }

    public enum HarnessError: Error {
        case noEvent(String)
        case radioRefused(String)
    }
}

/// A radio event's fields, handed from the waiting thread to the test.
struct RadioEventObject: @unchecked Sendable {
    var object: [String: Any]
}

/// Runs blocking work (a process, a pipe, a radio line) on a thread of its own, so the
/// cooperative pool stays free for the other tests running in parallel.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Runs tshark on a capture: how many packets it decoded and which it found malformed.
public enum Tshark {
    public struct Report: Sendable {
        public var packets: Int
        public var malformed: String
    }

    /// Runs on a thread of its own (see ``onOwnThread(_:)``). `excluding` is a display
    /// filter for packets tshark is known to flag wrongly; say why where it is used.
    public static func check(_ path: String, excluding: String? = nil) async throws -> Report {
        try await onOwnThread { try checkBlocking(path, excluding: excluding) }
    }

    public static func checkBlocking(_ path: String, excluding: String? = nil) throws -> Report {
        let all = try run(["-r", path])
        let filter = excluding.map { "_ws.malformed && !(\($0))" } ?? "_ws.malformed"
        let malformed = try run(["-r", path, "-Y", filter])
        return Report(packets: all.split(separator: "\n").count, malformed: malformed)
    }

    /// The full decode, for tests that look for a field.
    public static func verbose(_ path: String) throws -> String { try run(["-r", path, "-V"]) }

    private static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tshark"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.runWithSignalsUnblocked()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TsharkError.failed(arguments, process.terminationStatus) }
        return String(decoding: data, as: UTF8.self)
    }

    public enum TsharkError: Error { case failed([String], Int32) }
}
