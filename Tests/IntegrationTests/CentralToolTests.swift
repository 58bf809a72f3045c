import Foundation
import HCITransport
import Testing
import TestSupport

/// `bareble-central info`, the built executable, as a user runs it.
@Suite(.serialized) struct CentralTool {
    static let harness = Result { try RadioHarness(arguments: ["--tcp"]) }

    static var executable: String { builtExecutable(named: "bareble-central") }

    struct Run: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        try await onOwnThread { try Self.runBlocking(arguments, environment: environment) }
    }

    static func runBlocking(_ arguments: [String], environment: [String: String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "BAREBLE_TRANSPORT")
        // Bonds a tool saves land in a state directory of this run alone, never the user's,
        // and never another run's: the suites' radios all hand out F0:0D:00:00:00:01, :02,
        // ..., so a bond one suite's run saved under such an identity was found by another
        // suite's run with the same address, whose radio peer had no such bond (0x06).
        merged["XDG_STATE_HOME"] = ToolState.freshDirectory()
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.runWithSignalsUnblocked()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self), errors: String(decoding: err, as: UTF8.self))
    }

    @Test func infoAsJSONWithACapture() async throws {
        let harness = try Self.harness.get()
        let capture = TestScratch.root + "/info.btsnoop"
        let result = try await run(["info", "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)", "--json", "--btsnoop", capture])
        #expect(result.status == 0, "\(result.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let address = try #require(object["address"] as? String)
        // The address is the one the radio assigned to this client.
        _ = try await harness.clientID(address: address)
        let acl = try #require(object["aclBuffer"] as? [String: Any])
        #expect((acl["packetLength"] as? Int ?? 0) > 0)
        let commands = try #require(object["leCommands"] as? [String: Bool])
        #expect(commands["LE Set Extended Scan Enable"] == true)
        #expect((object["leFeatures"] as? [String])?.contains("LE Extended Advertising") == true)
        let report = try await Tshark.check(capture)
        #expect(report.packets > 10)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
    }

    /// `hci 0x1009`: Read BD_ADDR sent as raw bytes, its Command Complete decoded by the
    /// trace decoder: the address is the one the radio assigned this client. OGF/OCF gives
    /// the same; an opcode nobody answers says so.
    @Test func hciSendsAnyCommandAndDecodesTheAnswer() async throws {
        let harness = try Self.harness.get()
        let transport = ["--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"]
        let result = try await run(["hci", "0x1009", "--json"] + transport)
        #expect(result.status == 0, "\(result.errors)")
        let packets = result.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let sent = try #require(packets.first, "\(result.output)")
        #expect(sent["type"] as? String == "command" && sent["opcode"] as? Int == 0x1009 && sent["name"] as? String == "Read BD_ADDR")
        let complete = try #require(packets.first { $0["event"] as? Int == 0x0E }, "\(result.output)")
        #expect(complete["opcode"] as? Int == 0x1009)
        let fields = complete["fields"] as? [[String]] ?? []
        let address = try #require(fields.first { $0.first == "address" }?.last, "\(complete)")
        #expect(fields.contains { $0.first == "status" && $0.last?.hasPrefix("Success") == true }, "\(fields)")
        _ = try await harness.clientID(address: address)

        let text = try await run(["hci", "0x04/0x0009"] + transport)
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.hasPrefix("< Read BD_ADDR"), "\(text.output)")
        #expect(text.output.contains("> Command Complete: Read BD_ADDR"), "\(text.output)")
        #expect(text.output.contains("address: F0:0D:"), "\(text.output)")

        let bad = try await run(["hci", "0x10"] + transport + ["nothex"])
        #expect(bad.status != 0 && bad.errors.contains("not hex"), "\(bad.errors)")
    }

    @Test func withoutATransportItStartsTheVirtualRadioAndSaysSo() async throws {
        let result = try await run(["info"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.split(separator: "\n").filter { $0.contains("virtual radio") }.count == 1, "\(result.errors)")
        #expect(result.output.contains("Address"))
        #expect(result.output.contains("LE Set Extended Scan Enable"))
    }

    @Test func aBadTransportSaysWhatIsWrong() async throws {
        let result = try await run(["info", "--transport", "tcp:127.0.0.1:1"])
        #expect(result.status != 0)
        #expect(result.errors.contains("127.0.0.1:1"), "\(result.errors)")
        let kernel = try await run(["info", "--transport", "hci:0"])
        #expect(kernel.status != 0)
        #expect(kernel.errors.contains("no Bluetooth support"), "\(kernel.errors)")
    }

    /// A failed run leaves no capture behind (it used to leave a 16-byte header), and the
    /// monitor channel is refused without being offered back.
    @Test func theMonitorChannelIsRefusedAndAFailedRunLeavesNoCapture() async throws {
        let directory = ToolState.freshDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let monitorCapture = directory + "/monitor.btsnoop"
        let monitor = try await run(["scan", "--transport", "hci-monitor", "--btsnoop", monitorCapture])
        #expect(monitor.status != 0)
        #expect(monitor.errors.contains("cannot send a command"), "\(monitor.errors)")
        #expect(!monitor.errors.contains("use one of hci:N, hci-raw:N, hci-monitor"), "\(monitor.errors)")
        #expect(!FileManager.default.fileExists(atPath: monitorCapture))
        let refusedCapture = directory + "/refused.btsnoop"
        let refused = try await run(["info", "--transport", "tcp:127.0.0.1:1", "--btsnoop", refusedCapture])
        #expect(refused.status != 0)
        #expect(!FileManager.default.fileExists(atPath: refusedCapture))
    }
}

/// A state directory (XDG_STATE_HOME) for one run of a tool.
enum ToolState {
    static func freshDirectory() -> String {
        TestScratch.path("state")
    }
}
