import BluetoothCore
import Foundation
import Testing
import TestSupport

/// `bareble-peripheral serve` as a process on the virtual radio, against Bumble's GATT
/// client in the radio's centrals, and the clone round trip through `bareble-central
/// explore --json` of the radio's big peripheral.
@Suite(.serialized) struct PeripheralToolVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--big-peripheral"]) }
    static let log = Result { RadioEventLog(try harness.get()) }

    /// The tool serving `arguments` on a fresh exposed controller, and the address it
    /// advertises from.
    static func serve(_ arguments: [String]) throws -> ToolProcess {
        let harness = try harness.get()
        return try ToolProcess(["serve"] + arguments + RadioPeripheral.transport(harness), tool: "bareble-peripheral", input: true)
    }

    static func advertisingAddress(_ tool: ToolProcess) async throws -> String {
        let line = try await tool.next("advertising") { $0["event"] as? String == "advertising" }
        return try #require(line.object["address"] as? String)
    }

    @Test("serve --profile heart-rate: Bumble discovers it, subscribes, gets the simulated beats and what stdin notifies; events as JSON lines")
    func heartRateProfile() async throws {
        let tool = try Self.serve(["--profile", "heart-rate", "--name", "BareBLE-HR"])
        defer { tool.stop() }
        let address = try await Self.advertisingAddress(tool)
        let log = try Self.log.get()
        let name = try #require(try await log.control("add-central")["peer"] as? String)
        let connected = try await log.control("central \(name) connect \(address) mtu=247", timeout: .seconds(20))
        #expect(connected["mtu"] as? Int == 247, "\(connected)")
        _ = try await tool.next("connected") { $0["event"] as? String == "connected" }
        let mtu = try await tool.next("mtu") { $0["event"] as? String == "mtu" }
        #expect(mtu.object["mtu"] as? Int == 247)

        try await log.control("central \(name) discover", timeout: .seconds(30))
        let discovered = try await log.wait("gatt-discovered") { $0["peer"] as? String == name }
        let services = discovered["services"] as? [[String: Any]] ?? []
        #expect(services.map { $0["uuid"] as? String } == ["1800", "1801", "180D"])
        let heartRate = services.last?["characteristics"] as? [[String: Any]] ?? []
        #expect(heartRate.map { $0["uuid"] as? String } == ["2A37", "2A38"])
        #expect(heartRate.first?["properties"] as? Int == 0x10)
        #expect(heartRate.last?["value"] as? String == "01")
        let gap = services.first?["characteristics"] as? [[String: Any]] ?? []
        #expect(gap.first?["value"] as? String == Hex.string(Array("BareBLE-HR".utf8)).lowercased())

        try await log.control("central \(name) subscribe 2A37")
        let subscribed = try await tool.next("subscribed") { $0["event"] as? String == "subscribed" }
        #expect(subscribed.object["uuid"] as? String == "2A37" && subscribed.object["kind"] as? String == "notifications")
        // A simulated beat: flags 0, then a rate in 60 ... 99.
        let beat = try await log.wait("notification", timeout: .seconds(5)) { $0["peer"] as? String == name && $0["uuid"] as? String == "2A37" }
        let bytes = Hex.bytes(beat["value"] as? String ?? "") ?? []
        #expect(bytes.count == 2 && bytes[0] == 0 && (60..<100).contains(bytes[1]), "\(beat)")

        try tool.type("notify 2A37 00C8")
        _ = try await tool.next("sent") { $0["event"] as? String == "sent" }
        _ = try await log.wait("notification") { $0["peer"] as? String == name && $0["value"] as? String == "00c8" }
        // The handle the `subscribed` event shows is the CCCD's: it names its
        // characteristic too, and a tab separates words as a space does.
        let cccd = try #require(subscribed.object["attribute"] as? Int)
        try tool.type("notify\t\(cccd) 00C9")
        _ = try await tool.next("sent by the CCCD's handle") { $0["event"] as? String == "sent" }
        _ = try await log.wait("notification") { $0["peer"] as? String == name && $0["value"] as? String == "00c9" }
        // Longer than an attribute value may be (512 octets): refused, nothing sent.
        try tool.type("notify 2A37 " + String(repeating: "00", count: 513))
        let tooLong = try await tool.next("error") { $0["event"] as? String == "error" }
        #expect((tooLong.object["error"] as? String)?.contains("at most 512 octets") == true, "\(tooLong.object)")
        try tool.type("set 2A38 02")
        _ = try await tool.next("set") { $0["event"] as? String == "sent" }
        let handle = try #require(heartRate.last?["value_handle"] as? Int)
        #expect(try await log.control("central \(name) read \(handle)")["value"] as? String == "02")
        _ = try await tool.next("read") { $0["event"] as? String == "read" && $0["attribute"] as? Int == handle }
        // Its CCCD written back to 0000: unsubscribed.
        #expect(try await log.control("central \(name) write \(cccd) 0000")["written"] as? Bool == true)
        let unsubscribed = try await tool.next("unsubscribed") { $0["event"] as? String == "unsubscribed" }
        #expect(unsubscribed.object["uuid"] as? String == "2A37")
        try tool.type("bogus")
        let refused = try await tool.next("error") { $0["event"] as? String == "error" }
        #expect(refused.object["command"] as? String == "bogus")

        try tool.type("disconnect")
        let gone = try await tool.next("disconnected") { $0["event"] as? String == "disconnected" }
        #expect(gone.object["reason"] as? Int == 0x16)
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
    }

    /// A new radio central that will pair Just Works, connected to the tool's advertising,
    /// and what it discovered.
    static func discoveredByPairingCentral(_ tool: ToolProcess) async throws -> (name: String, discovered: [String: Any]) {
        let address = try await advertisingAddress(tool)
        let log = try Self.log.get()
        let name = try #require(try await log.control("add-central")["peer"] as? String)
        try await log.control("pairing \(name) io=no-input-no-output sc=1 mitm=0 bonding=0")
        try await log.control("central \(name) connect \(address)", timeout: .seconds(20))
        try await log.control("central \(name) discover", timeout: .seconds(30))
        return (name, try await log.wait("gatt-discovered") { $0["peer"] as? String == name })
    }

    @Test("serve --require-encryption: 0x05 before Bumble pairs, the value after; writes come out with their value")
    func encryptionRequired() async throws {
        let tool = try Self.serve(["--profile", "battery", "--require-encryption", "2A19", "--no-bond"])
        defer { tool.stop() }
        let log = try Self.log.get()
        let (name, discovered) = try await Self.discoveredByPairingCentral(tool)
        let battery = (discovered["services"] as? [[String: Any]])?.last?["characteristics"] as? [[String: Any]] ?? []
        #expect((battery.first?["value"] as? [String: Any])?["error"] as? Int == 0x05, "\(battery)")
        let handle = try #require(battery.first?["value_handle"] as? Int)
        #expect(try await log.control("central \(name) pair", timeout: .seconds(45))["paired"] as? Bool == true)
        _ = try await tool.next("paired") { $0["event"] as? String == "paired" }
        #expect(try await log.control("central \(name) read \(handle)")["value"] as? String == "64")
        // The Client Supported Features characteristic is writable: a write event with its value.
        let gatt = (discovered["services"] as? [[String: Any]])?[1]["characteristics"] as? [[String: Any]] ?? []
        let features = try #require(gatt.first { $0["uuid"] as? String == "2B29" }?["value_handle"] as? Int)
        #expect(try await log.control("central \(name) write \(features) 01")["written"] as? Bool == true)
        let wrote = try await tool.next("write") { $0["event"] as? String == "write" }
        #expect(wrote.object["value"] as? String == "01" && wrote.object["attribute"] as? Int == features)
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
    }
}

extension PeripheralToolVirtualRadio {
    /// The heart rate measurement can only be notified: nothing reads it, so what protects
    /// it is its CCCD. Before pairing Bumble is refused the subscription (0x05); after, it
    /// subscribes and the simulated values arrive.
    @Test("serve --require-encryption of a notify-only value: its subscription needs the pairing, then the values arrive")
    func encryptionRequiredToSubscribe() async throws {
        let tool = try Self.serve(["--profile", "heart-rate", "--require-encryption", "2A37", "--no-bond"])
        defer { tool.stop() }
        let log = try Self.log.get()
        let (name, discovered) = try await Self.discoveredByPairingCentral(tool)
        let characteristics = (discovered["services"] as? [[String: Any]] ?? []).flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
        let measurement = try #require(characteristics.first { $0["uuid"] as? String == "2A37" })
        let descriptors = measurement["descriptors"] as? [[String: Any]] ?? []
        let cccd = try #require(descriptors.first { $0["uuid"] as? String == "2902" }?["handle"] as? Int)
        let refused = try await log.control("central \(name) write \(cccd) 0100")
        #expect(refused["error"] as? Int == 0x05, "\(refused)")
        #expect(try await log.control("central \(name) pair", timeout: .seconds(45))["paired"] as? Bool == true)
        try await log.control("central \(name) subscribe 2A37")
        let value = try await log.wait("notification", timeout: .seconds(10)) { $0["peer"] as? String == name && $0["uuid"] as? String == "2A37" }
        #expect((value["value"] as? String)?.count == 4, "\(value)")
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
    }

    /// `--database` reads a file a user may have edited or got from anywhere: bad JSON,
    /// nesting that would exhaust the stack, and a file that is not an explore output are
    /// refused with a message, before any controller is opened.
    @Test("serve --database refuses broken, deeply nested and foreign files with a message")
    func hostileDatabaseFiles() async throws {
        let cases: [(String, String)] = [
            ("{\"services\": [", "JSON"),
            (String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000), "nesting deeper than 64"),
            ("{\"name\": \"not an explore output\"}", "has no \"services\""),
            ("{\"services\": [{\"uuid\": \"180F\", \"characteristics\": [{\"uuid\": \"2A19\", \"properties\": 4096}]}]}", "without a UUID or properties"),
        ]
        for (contents, expected) in cases {
            let file = RadioPeripheral.temporaryPath("hostile.json")
            try contents.write(toFile: file, atomically: true, encoding: .utf8)
            let tool = try ToolProcess(["serve", "--database", file, "--transport", "tcp:127.0.0.1:1"], tool: "bareble-peripheral", input: true)
            defer { tool.stop() }
            let exit = try await tool.finish()
            #expect(exit.status == 1, "\(expected): \(exit.errors)")
            #expect(exit.errors.contains(expected), "\(exit.errors)")
        }
    }
}
