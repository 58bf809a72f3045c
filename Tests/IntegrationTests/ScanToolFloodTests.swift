import Foundation
import Testing
import TestSupport

/// `bareble-central scan --json` against a controller that sends more than its output can
/// take: a fake controller on TCP (`bareble-bench flood-controller`) floods legacy
/// advertising reports while nobody reads the tool's pipe.
@Suite(.serialized) struct ScanToolFlood {
    static let reports = 50_000

    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs the tool against the flood, reading its stdout only once every report was sent,
    /// so its output is stuck behind a full pipe for the whole flood.
    func runBehindAFullPipe() async throws -> Outcome {
        try await onOwnThread {
            let controller = Process()
            controller.executableURL = URL(fileURLWithPath: builtExecutable(named: "bareble-bench"))
            controller.arguments = ["flood-controller", "--reports", String(Self.reports)]
            let controllerOutput = Pipe()
            controller.standardOutput = controllerOutput
            try controller.runWithSignalsUnblocked()
            var said = Data()
            func line(startingWith prefix: String) -> String? {
                while true {
                    if let end = said.firstIndex(of: UInt8(ascii: "\n")) {
                        let text = String(decoding: said[..<end], as: UTF8.self)
                        said.removeSubrange(...end)
                        if text.hasPrefix(prefix) { return text }
                        continue
                    }
                    let chunk = controllerOutput.fileHandleForReading.availableData
                    if chunk.isEmpty { return nil }
                    said.append(chunk)
                }
            }
            let port = try #require(line(startingWith: "port ").map { String($0.dropFirst(5)) })

            let tool = Process()
            tool.executableURL = URL(fileURLWithPath: CentralTool.executable)
            tool.arguments = ["scan", "--transport", "tcp:127.0.0.1:\(port)", "--json", "--duplicates", "all", "--duration", "120"]
            let output = Pipe()
            let errors = Pipe()
            tool.standardOutput = output
            tool.standardError = errors
            try tool.run()
            #expect(line(startingWith: "sent ") == "sent \(Self.reports)")
            controller.waitUntilExit()
            // The controller closed the connection after the last report: the tool prints
            // what it holds and exits on its own.
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            let complaints = errors.fileHandleForReading.readDataToEndOfFile()
            tool.waitUntilExit()
            return Outcome(status: tool.terminationStatus, output: String(decoding: printed, as: UTF8.self), errors: String(decoding: complaints, as: UTF8.self))
        }
    }

    @Test func whatTheToolCouldNotPrintIsCountedInItsOutput() async throws {
        let outcome = try await runBehindAFullPipe()
        let lines = try outcome.output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        let advertisements = lines.filter { $0["address"] != nil }
        let drops = lines.filter { $0["event"] as? String == "dropped" }
        let dropped = drops.compactMap { $0["count"] as? Int }.reduce(0, +)
        #expect(advertisements.count + dropped == Self.reports, "the tool said: \(outcome.errors.split(separator: "\n").filter { !$0.contains("fell behind") }.suffix(5))")
        #expect(dropped > 0)
        #expect(drops.last?["total"] as? Int == dropped)
        #expect(outcome.errors.contains("\(advertisements.count) advertisements handled, \(dropped) dropped"))
        // The controller going away ends the scan as a failure, after everything was printed.
        #expect(outcome.status == 1)

        // The wall-clock time of each line is ISO 8601 UTC with microseconds, and now.
        let time = try #require(advertisements.first?["time"] as? String)
        #expect(time.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/) != nil, "\(time)")
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(parser.date(from: time))
        #expect(abs(date.timeIntervalSinceNow) < 300)
        #expect(advertisements.first?["timestamp"] is Int)
    }
}
