import Foundation
import BluetoothCore
import Testing
import TestSupport

/// `bareble-trace` as a user runs it: against tshark packet by packet on the corpus of every
/// packet kind and on a capture of an explore of the radio's big peripheral, from a pipe,
/// on damaged captures, and `stats` on a capture whose figures are known by hand (`gatt`
/// is checked against the explore in GATTExploreTool, whose radio has the richer database).
@Suite(.serialized) struct TraceTool {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--big-peripheral"]) }
    static let executable = builtExecutable(named: "bareble-trace")

    struct Run {
        var status: Int32
        var output: String
        var errors: String
        var signalled: Bool
    }

    /// Runs `executable` with `arguments`, `input` on its stdin, to the end.
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> Run {
        try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let (output, errors, feed) = (Pipe(), Pipe(), Pipe())
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = input == nil ? FileHandle.nullDevice : feed
            try process.runWithSignalsUnblocked()
            if let input {
                // A thread of its own: a capture larger than the pipe would block against
                // our own reading of stdout.
                Thread {
                    feed.fileHandleForWriting.write(input)
                    try? feed.fileHandleForWriting.close()
                }.start()
            }
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Run(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
                       errors: String(decoding: err, as: UTF8.self), signalled: process.terminationReason == .uncaughtSignal)
        }
    }

    /// tools/trace-agreement.py over `captures`: its summary line, which it prints last.
    static func agreement(_ captures: [String]) async throws -> Run {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("tools/trace-agreement.py").path
        return try await run("/usr/bin/env", ["python3", script, executable] + captures)
    }

    static func packets(_ summary: String) -> Int {
        let words = summary.split(separator: " ")
        guard let at = words.firstIndex(of: "packets") else { return 0 }
        return Int(words[words.index(before: at)]) ?? 0
    }

    @Test("every packet kind the stack declares, well-formed and cut short: bareble-trace and tshark agree on each")
    func corpusAgreesWithTshark() async throws {
        let path = RadioPeripheral.temporaryPath("corpus.btsnoop")
        try TraceCorpus.write(to: path)
        let result = try await Self.agreement([path])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.contains(" 0 disagreements"), "\(result.output)")
        #expect(Self.packets(result.output) == TraceCorpus.records().count, "\(result.output)")
    }

    @Test("an explore of the big peripheral: agreement with tshark, ATT requests joined to answers, the same from a pipe")
    func exploreCapture() async throws {
        let harness = try Self.harness.get()
        let capture = RadioPeripheral.temporaryPath("explore.btsnoop")
        let explore = try await RadioPeripheral.central(["explore", "C4:4B:4D:00:00:04/random", "--json", "--no-auto-pair", "--btsnoop", capture] + RadioPeripheral.transport(harness))
        #expect(explore.status == 0, "\(explore.errors)")
        let result = try await Self.agreement([capture])
        #expect(result.status == 0 && result.output.contains(" 0 disagreements"), "\(result.output)\(result.errors)")
        #expect(Self.packets(result.output) > 500, "\(result.output)")

        let decoded = try await Self.run(Self.executable, ["read", capture, "--json", "--protocol", "att"])
        #expect(decoded.status == 0, "\(decoded.errors)")
        let lines = decoded.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let requests = lines.filter { [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20].contains($0["attOpcode"] as? Int ?? -1) }
        let answers = lines.filter { $0["answers"] != nil }
        #expect(requests.count > 100 && answers.count == requests.count, "\(requests.count) requests, \(answers.count) answers")
        #expect(answers.allSatisfy { ($0["rttMicroseconds"] as? Int ?? -1) >= 0 })
        // Handles named from the explore's own discovery (a characteristic read later).
        #expect(lines.contains { ($0["summary"] as? String ?? "").contains("(Device Name)") })

        let piped = try await Self.run(Self.executable, ["read", "-", "--json", "--protocol", "att"], input: try Data(contentsOf: URL(fileURLWithPath: capture)))
        #expect(piped.status == 0 && piped.output == decoded.output)
    }

    @Test("damaged captures: random bytes, a cut record, a length that lies, an unknown datalink: a clear error, never a crash")
    func damagedCaptures() async throws {
        let corpus = RadioPeripheral.temporaryPath("whole.btsnoop")
        try TraceCorpus.write(to: corpus)
        let whole = try Data(contentsOf: URL(fileURLWithPath: corpus))
        var random = SeededRandom(seed: 7)
        var lying = Data(whole.prefix(16))
        lying.append(contentsOf: [0x00, 0x00, 0x00, 0x08, 0x7F, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16))
        var datalink = whole
        datalink[15] = 0xEB // 1003: H5 is not read
        let cases: [(String, Data, String)] = [
            ("random", Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }), "not a btsnoop, pcap or pcapng capture"),
            ("cut", whole.prefix(whole.count - 3), "cut short"),
            ("lying", lying, "claims"),
            ("datalink", datalink, "datalink 1003"),
            ("empty", Data(), "empty"),
        ]
        for (name, bytes, message) in cases {
            let run = try await Self.run(Self.executable, ["read", "-", "--json"], input: bytes)
            #expect(!run.signalled && run.status != 0, "\(name): \(run.status) \(run.errors)")
            #expect(run.errors.contains(message), "\(name): \(run.errors)")
        }
        // Within a decodable capture, random payloads are hex lines, not aborts.
        // Not named *.btsnoop: CI compares every such file a run writes with tshark, and
        // random payloads decode differently in each (that is the point here).
        let noise = RadioPeripheral.temporaryPath("noise.capture")
        var file = Data(whole.prefix(16))
        for _ in 0..<2000 {
            let length = Int.random(in: 0...40, using: &random)
            let flags = UInt8.random(in: 0...3, using: &random)
            file.append(contentsOf: [0, 0, 0, UInt8(length), 0, 0, 0, UInt8(length), 0, 0, 0, flags, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8))
            file.append(contentsOf: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        try file.write(to: URL(fileURLWithPath: noise))
        let run = try await Self.run(Self.executable, ["read", noise, "--json"])
        #expect(run.status == 0 && !run.signalled, "\(run.errors)")
        #expect(run.output.split(separator: "\n").count == 2000)
    }

    @Test("stats on a scripted capture: the figures worked out by hand, in JSON and text, from a file and a pipe")
    func statsOnAKnownCapture() async throws {
        let path = RadioPeripheral.temporaryPath("stats.btsnoop")
        try TraceScript.statisticsExample().write(to: path)
        let run = try await Self.run(Self.executable, ["stats", path, "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(stats["packets"] as? Int == 18)
        let connections = try #require(stats["connections"] as? [[String: Any]])
        #expect(connections.count == 1)
        let connection = try #require(connections.first)
        #expect(connection["address"] as? String == "C4:4B:4D:00:00:07" && connection["addressType"] as? String == "random")
        #expect(connection["handle"] as? Int == 0x40 && connection["seconds"] as? Double == 0.02)
        let sent = try #require(connection["sent"] as? [String: Any])
        let received = try #require(connection["received"] as? [String: Any])
        #expect(sent["packets"] as? Int == 4 && sent["bytes"] as? Int == 32 && sent["bytesPerSecond"] as? Double == 1600)
        #expect(received["packets"] as? Int == 7 && received["bytes"] as? Int == 58 && received["bytesPerSecond"] as? Double == 2900)
        let att = try #require(connection["att"] as? [String: Any])
        #expect(att["transactions"] as? Int == 3 && att["p99Microseconds"] as? Int == 2000)
        #expect((1000...1031).contains(att["p50Microseconds"] as? Int ?? 0))
        #expect(att["notifications"] as? Int == 3 && att["notificationsPerSecond"] as? Double == 150)
        #expect(att["errors"] as? Int == 1)
        #expect((att["errorCodes"] as? [[String: Any]])?.first?["code"] as? Int == 5)
        #expect((connection["encryption"] as? [String: Any])?["enabled"] as? Int == 1)
        let pairing = try #require(connection["pairing"] as? [String: Any])
        #expect(pairing["attempts"] as? Int == 1 && pairing["completed"] as? Int == 1 && pairing["failed"] as? Int == 0)
        let advertiser = try #require((stats["advertisers"] as? [[String: Any]])?.first)
        #expect(advertiser["reports"] as? Int == 4 && advertiser["rssiMin"] as? Int == -70 && advertiser["rssiMax"] as? Int == -50)
        #expect(advertiser["meanIntervalMicroseconds"] as? Int == 100_000)

        let text = try await Self.run(Self.executable, ["stats", "-"], input: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("connection hci0 handle 64 C4:4B:4D:00:00:07/random, 0.020 s"), "\(text.output)")
        #expect(text.output.contains("sent      4 packets, 32 bytes, 1600.0 B/s"), "\(text.output)")
        #expect(text.output.contains("3 notifications (150.00/s), 0 indications, 1 errors: Insufficient Authentication (0x05) x1"), "\(text.output)")
        #expect(text.output.contains("advertiser hci0 C4:4B:4D:00:00:08 (random): 4 reports, RSSI -70 to -50 dBm, mean interval 100.000 ms"), "\(text.output)")
    }

    @Test("a peer that pipelines 40 requests: the 8 past the decoder's bound are counted and said on stderr, nothing silently")
    func boundsAreSaid() async throws {
        var script = TraceScript()
        script.connected(0x40, peer: BluetoothAddress("C4:4B:4D:00:00:07")!)
        for handle in 1...UInt8(40) { script.l2cap([0x0A, handle, 0x00], sent: false) }
        let path = RadioPeripheral.temporaryPath("pipelined.btsnoop")
        try script.write(to: path)
        let run = try await Self.run(Self.executable, ["read", path, "--json"])
        #expect(run.status == 0 && run.output.split(separator: "\n").count == 41, "\(run.errors)")
        #expect(run.errors.contains("8 ATT requests or indications left unjoined (more than 32 outstanding)"), "\(run.errors)")
        let quiet = try await Self.run(Self.executable, ["read", path, "--json", "--connection", "64"])
        #expect(quiet.errors.contains("8 ATT requests"), "the count does not depend on the filters: \(quiet.errors)")
    }

    @Test("--trace on another tool: its own traffic decoded on stderr, stdout untouched")
    func toolTrace() async throws {
        let harness = try Self.harness.get()
        let run = try await RadioPeripheral.central(["info", "--json", "--trace"] + RadioPeripheral.transport(harness))
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.contains("< Reset  #1 [hci0]"), "\(run.errors.prefix(2000))")
        #expect(run.errors.contains("> Command Complete: Reset  #2"), "\(run.errors.prefix(2000))")
        #expect(run.errors.contains("> Command Complete: Read BD_ADDR"), "\(run.errors.prefix(2000))")
        #expect((try? JSONSerialization.jsonObject(with: Data(run.output.utf8))) is [String: Any])
    }
}
