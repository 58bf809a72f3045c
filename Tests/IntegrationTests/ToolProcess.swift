import Foundation
import TestSupport

/// A built tool (`bareble-beacon`, `bareble-central`) running while a test reads its JSON
/// lines as they come (with the instant each arrived) and drives the virtual radio.
///
/// Every wait is async and blocks a thread of its own, never one of Swift concurrency's
/// cooperative threads: on a 2-core machine two blocked test tasks would starve every other
/// suite running in parallel (their deadlines then fire for nothing).
final class ToolProcess: @unchecked Sendable {
    /// `@unchecked`: the JSON object is only read after it was handed over.
    struct Line: @unchecked Sendable {
        var arrived: ContinuousClock.Instant
        var object: [String: Any]
        var text: String
    }

    enum Failure: Error, CustomStringConvertible {
        case noLine(String, seen: [String])
        var description: String {
            switch self {
            case let .noLine(what, seen): "no line \(what) in time; seen: \(seen.suffix(12).joined(separator: "\n"))"
            }
        }
    }

    let process = Process()
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pending = Data()
    private var lines: [Line] = []
    private var consumed = 0
    private var ended = false
    private var errorText = Data()
    private var errorsEnded = false
    private let errors = Pipe()
    private let input: Pipe?

    /// `input`: give the tool a pipe as stdin, written with ``type(_:)`` and closed with
    /// ``closeInput()``; otherwise it inherits the test's stdin.
    init(_ arguments: [String], tool: String = "bareble-beacon", input: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: builtExecutable(named: tool))
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "BAREBLE_TRANSPORT")
        environment["XDG_STATE_HOME"] = ToolState.freshDirectory()
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        self.input = input ? Pipe() : nil
        if let pipe = self.input { process.standardInput = pipe }
        output.fileHandleForReading.readabilityHandler = { [self] handle in
            let chunk = handle.availableData
            let now = ContinuousClock.now
            condition.lock()
            defer { condition.broadcast(); condition.unlock() }
            if chunk.isEmpty {
                ended = true
                handle.readabilityHandler = nil
                return
            }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
                lines.append(Line(arrived: now, object: object, text: text))
            }
        }
        try process.runWithSignalsUnblocked()
        // stderr is collected as it comes, so a test can wait for a prompt on it: by a thread
        // of its own blocking in read, not a second Dispatch readability source (two per
        // process made libdispatch's event loop crash once, in a run of eleven suites).
        let reading = errors.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = reading.availableData
                condition.lock()
                defer { condition.broadcast(); condition.unlock() }
                if chunk.isEmpty { errorsEnded = true; return }
                errorText.append(chunk)
            }
        }
    }

    /// Writes `line` and a newline to the tool's stdin (a user typing).
    func type(_ line: String) throws {
        try input?.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes the tool's stdin (end of file).
    func closeInput() throws {
        try input?.fileHandleForWriting.close()
    }

    /// Waits until what the tool wrote to stderr contains `text`; returns all of it so far.
    func errorsContaining(_ text: String, timeout: Duration = .seconds(10)) async throws -> String {
        try await onOwnThread {
            let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
            self.condition.lock()
            defer { self.condition.unlock() }
            while true {
                let soFar = String(decoding: self.errorText, as: UTF8.self)
                if soFar.contains(text) { return soFar }
                if self.errorsEnded || !self.condition.wait(until: deadline) {
                    throw Failure.noLine("on stderr containing \(text)", seen: [soFar])
                }
            }
        }
    }

    /// The next line (after the ones already returned) satisfying `predicate`.
    func next(_ what: String, timeout: Duration = .seconds(10), where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> Line {
        try await onOwnThread { try self.nextBlocking(what, timeout: timeout, where: predicate) }
    }

    /// The next line matching each of `predicates`, in whatever order the tool prints them
    /// (events of separate tasks, such as a pairing's end and a subscription, come either
    /// way round); one line per predicate, in the predicates' order.
    func next(all what: String, timeout: Duration = .seconds(10), _ predicates: [@Sendable ([String: Any]) -> Bool]) async throws -> [Line] {
        try await onOwnThread {
            var found: [Line?] = Array(repeating: nil, count: predicates.count)
            _ = try self.nextBlocking(what, timeout: timeout) { object in
                for (index, predicate) in predicates.enumerated() where found[index] == nil && predicate(object) {
                    found[index] = Line(arrived: .now, object: object, text: "")
                    break
                }
                return !found.contains { $0 == nil }
            }
            return found.compactMap { $0 }
        }
    }

    private func nextBlocking(_ what: String, timeout: Duration, where predicate: ([String: Any]) -> Bool) throws -> Line {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while true {
            while consumed < lines.count {
                let line = lines[consumed]
                consumed += 1
                if predicate(line.object) { return line }
            }
            if ended || !condition.wait(until: deadline) {
                throw Failure.noLine(what, seen: lines.map(\.text))
            }
        }
    }

    /// Every line so far, including those already returned.
    var allLines: [Line] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    struct Exit: Sendable {
        var status: Int32
        var errors: String
        /// stdout, whole.
        var output: String
    }

    /// The tool's resident memory now (VmRSS), in kB.
    var residentKilobytes: Int { Self.residentKilobytes(of: "\(process.processIdentifier)") }

    /// VmRSS of process `pid` ("self": this one), in kB, from /proc; 0 when unreadable.
    static func residentKilobytes(of pid: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Ends the tool if it still runs (SIGTERM): a test that failed half-way must not leave
    /// it holding the controller the next test opens.
    func stop() {
        if process.isRunning { process.terminate() }
    }

    /// Ctrl-C, then the exit status and what went to stderr.
    func interrupt() async throws -> Exit {
        process.interrupt()
        return try await finish()
    }

    /// Waits for the tool to exit and for both of its pipes to end.
    func finish() async throws -> Exit {
        try await onOwnThread {
            self.process.waitUntilExit()
            self.condition.lock()
            defer { self.condition.unlock() }
            let deadline = Date().addingTimeInterval(5)
            while !(self.ended && self.errorsEnded), self.condition.wait(until: deadline) {}
            return Exit(
                status: self.process.terminationStatus, errors: String(decoding: self.errorText, as: UTF8.self),
                output: self.lines.map(\.text).joined(separator: "\n") + (self.pending.isEmpty ? "" : "\n" + String(decoding: self.pending, as: UTF8.self)))
        }
    }
}

/// Control lines and events without holding a cooperative thread (see ``ToolProcess``).
extension RadioHarness {
    /// When a control line went out and when its ack came back, both read on the thread
    /// that did it: a test task may resume much later on a loaded machine.
    struct Sent: Sendable {
        var written: ContinuousClock.Instant
        var acknowledged: ContinuousClock.Instant
    }

    /// ``control(_:)`` without holding a cooperative thread.
    @discardableResult
    func send(_ line: String) async throws -> Sent {
        try await onOwnThread {
            let written = ContinuousClock.now
            try self.controlBlocking(line)
            return Sent(written: written, acknowledged: ContinuousClock.now)
        }
    }

    /// ``waitForEvent(_:timeout:where:)`` without holding a cooperative thread.
    func event(_ name: String, where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> [String: Any] {
        try await waitForEvent(name, where: predicate)
    }
}

/// The virtual radio's iBeacons (tools/virtual-radio/README.md, `--beacons`).
enum RadioBeacons {
    static let uuid = "B4AEBEAC-7E57-4BA2-B1E0-00000000C0DE"
    static let measuredPower = -59

    static func minor(_ object: [String: Any]) -> Int? {
        guard object["uuid"] as? String == uuid, object["major"] as? Int == 1 else { return nil }
        return object["minor"] as? Int
    }
}
