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
    private let errors = Pipe()

    init(_ arguments: [String], tool: String = "bareble-beacon") throws {
        process.executableURL = URL(fileURLWithPath: builtExecutable(named: tool))
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "BAREBLE_TRANSPORT")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
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
        try process.run()
    }

    /// The next line (after the ones already returned) satisfying `predicate`.
    func next(_ what: String, timeout: Duration = .seconds(10), where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> Line {
        try await onOwnThread { try self.nextBlocking(what, timeout: timeout, where: predicate) }
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
    }

    /// Ctrl-C, then the exit status and what went to stderr.
    func interrupt() async throws -> Exit {
        process.interrupt()
        return try await finish()
    }

    func finish() async throws -> Exit {
        try await onOwnThread {
            self.process.waitUntilExit()
            let text = String(decoding: self.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return Exit(status: self.process.terminationStatus, errors: text)
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
