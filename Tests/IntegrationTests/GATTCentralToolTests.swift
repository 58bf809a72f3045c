import Foundation
import HCITransport
import Testing
import TestSupport

/// `bareble-central read`, `write` and `subscribe` against the radio's HRM peripheral; the
/// radio's `gatt-write` and `subscription` events say what the peer saw.
@Suite(.serialized) struct GATTCentralTool {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral"]) }

    @Test func writeThenReadBack() async throws {
        let harness = try Self.harness.get()
        let transport = RadioPeripheral.transport(harness)
        let wrote = try await RadioPeripheral.central(["write", RadioPeripheral.address, RadioPeripheral.readWrite, "hello BareBLE", "--text"] + transport)
        #expect(wrote.status == 0, "\(wrote.errors)")
        let seen = try await harness.waitForEvent("gatt-write") { $0["uuid"] as? String == RadioPeripheral.readWrite }
        #expect(seen["value"] as? String == "68656c6c6f2042617265424c45")
        #expect(seen["with_response"] as? Bool == true)
        let read = try await RadioPeripheral.central(["read", RadioPeripheral.address, RadioPeripheral.readWrite, "--json"] + transport)
        #expect(read.status == 0, "\(read.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any])
        #expect(object["value"] as? String == "68656C6C6F2042617265424C45")
        // Decoded through the characteristic's Presentation Format (utf8s).
        #expect((object["decoded"] as? String)?.contains("hello BareBLE") == true, "\(object)")

        // 300 bytes (one Write Request at ATT_MTU 517), addressed by handle, read back.
        let long = (0..<300).map { String(format: "%02x", ($0 * 7) & 0xFF) }.joined()
        let handle = try await valueHandle(of: RadioPeripheral.readWrite, harness)
        let longWrite = try await RadioPeripheral.central(["write", RadioPeripheral.address, "0x" + String(handle, radix: 16), long] + transport)
        #expect(longWrite.status == 0, "\(longWrite.errors)")
        let seenLong = try await harness.waitForEvent("gatt-write") { $0["uuid"] as? String == RadioPeripheral.readWrite }
        #expect(seenLong["value"] as? String == long)
        let longRead = try await RadioPeripheral.central(["read", RadioPeripheral.address, String(handle)] + transport)
        #expect(longRead.status == 0, "\(longRead.errors)")
        #expect(longRead.output.hasPrefix(long.uppercased()), "\(longRead.output)")
    }

    @Test func writeWithoutResponseReachesThePeer() async throws {
        let harness = try Self.harness.get()
        let result = try await RadioPeripheral.central(["write", RadioPeripheral.address, RadioPeripheral.writeWithoutResponse, "C0FFEE", "--without-response"] + RadioPeripheral.transport(harness))
        #expect(result.status == 0, "\(result.errors)")
        let seen = try await harness.waitForEvent("gatt-write") { $0["uuid"] as? String == RadioPeripheral.writeWithoutResponse }
        #expect(seen["value"] as? String == "c0ffee")
        #expect(seen["with_response"] as? Bool == false)
    }

    @Test(arguments: [false, true]) func subscribeReceivesExactlyWhatThePeerSent(indicate: Bool) async throws {
        let harness = try Self.harness.get()
        let target = indicate ? RadioPeripheral.indicate : RadioPeripheral.notify
        let values = indicate ? ["01", "0203", "A0A1A2A3A4A5A6A7A8A9"] : ["11", "1213", "FF00FF00", "42"]
        let tool = try ToolProcess(
            ["subscribe", RadioPeripheral.address, target, "--count", "\(values.count)", "--json"] + (indicate ? ["--indicate"] : [])
                + RadioPeripheral.transport(harness),
            tool: "bareble-central")
        let cccd = indicate ? "indicate" : "notify"
        try await harness.waitForEvent("subscription") { $0["characteristic"] as? String == target && $0["cccd"] as? String == cccd }
        for (index, value) in values.enumerated() {
            let line = "\(indicate ? "indicate" : "notify") peripheral \(target) \(value)"
            if index < values.count - 1 {
                try await harness.send(line)
            } else {
                // Not waiting for this ack: the tool's unsubscription is logged before the
                // ack of the last indication (it waits for the confirmation), and waiting
                // for the ack would skip that event.
                try harness.radio.send(controlLine: line)
            }
        }
        var received: [String] = []
        for _ in values {
            let line = try await tool.next("a value") { $0["value"] != nil }
            received.append(line.object["value"] as? String ?? "?")
            #expect((line.object["time"] as? String)?.count == 12)
        }
        #expect(received == values)
        let exit = try await tool.finish()
        #expect(exit.status == 0, "\(exit.errors)")
        #expect(exit.errors.contains("unsubscribed after \(values.count) values"), "\(exit.errors)")
        // Turned off on the peer before the tool disconnected.
        try await harness.waitForEvent("subscription") { $0["characteristic"] as? String == target && $0["cccd"] as? String == "none" }
        #expect(tool.allLines.count == values.count)
    }

    @Test func ctrlCUnsubscribesCleanly() async throws {
        let harness = try Self.harness.get()
        let target = RadioPeripheral.notify
        let tool = try ToolProcess(["subscribe", RadioPeripheral.address, target] + RadioPeripheral.transport(harness), tool: "bareble-central")
        try await harness.waitForEvent("subscription") { $0["characteristic"] as? String == target && $0["cccd"] as? String == "notify" }
        try await harness.send("notify peripheral \(target) 5A")
        let line = try await tool.next("the value") { _ in true }
        #expect(line.text.hasSuffix("  5A"), "\(line.text)")
        let exit = try await tool.interrupt()
        #expect(exit.status == 0, "\(exit.errors)")
        #expect(exit.errors.contains("unsubscribed after 1 values"), "\(exit.errors)")
        try await harness.waitForEvent("subscription") { $0["characteristic"] as? String == target && $0["cccd"] as? String == "none" }
        // Then the tool disconnected: Remote User Terminated Connection.
        try await harness.waitForEvent("disconnected") { $0["peer"] as? String == "peripheral" && $0["reason"] as? Int == 0x13 }
    }

    /// `--gatt-cache DIR`: the second run of the tool, a new process, reads the Database
    /// Hash and sends no discovery request (counted in its capture).
    @Test func aCacheDirectoryLetsTheNextRunSkipDiscovery() async throws {
        let harness = try Self.harness.get()
        let directory = RadioPeripheral.temporaryPath("gatt-cache")
        var captures: [String] = []
        for run in 1...2 {
            let capture = RadioPeripheral.temporaryPath("cache-\(run).btsnoop")
            captures.append(capture)
            let result = try await RadioPeripheral.central(
                ["read", RadioPeripheral.address, "2A19", "--gatt-cache", directory, "--btsnoop", capture] + RadioPeripheral.transport(harness))
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.hasPrefix("57  87%"), "\(result.output)")
        }
        let file = try String(contentsOfFile: directory + "/C4-4B-4D-00-00-01-random.gatt", encoding: .utf8)
        #expect(file.hasPrefix("gatt-database 1\nhash "))
        let first = try #require(ATTRequests.perConnection(try BTSnoopFile(contentsOf: captures[0])).first)
        let second = try #require(ATTRequests.perConnection(try BTSnoopFile(contentsOf: captures[1])).first)
        #expect(first.filter(ATTRequests.isDiscovery).count >= 6, "\(first)")
        #expect(second.filter(ATTRequests.isDiscovery).isEmpty, "\(second)")
        // Exchange MTU, Read By Type for the hash, the Service Changed CCCD write, the Read.
        #expect(second.map(\.first) == [0x02, 0x08, 0x12, 0x0A], "\(second)")
    }

    @Test func badArgumentsSayWhatToGive() async throws {
        let harness = try Self.harness.get()
        let transport = RadioPeripheral.transport(harness)
        let notAHandle = try await RadioPeripheral.central(["read", RadioPeripheral.address, "zz"] + transport)
        #expect(notAHandle.status != 0)
        #expect(notAHandle.errors.contains("neither a UUID nor a handle"), "\(notAHandle.errors)")
        let missing = try await RadioPeripheral.central(["read", RadioPeripheral.address, "2A6E"] + transport)
        #expect(missing.status != 0)
        #expect(missing.errors.contains("bareble-central explore"), "\(missing.errors)")
        let notHex = try await RadioPeripheral.central(["write", RadioPeripheral.address, RadioPeripheral.readWrite, "xyz"] + transport)
        #expect(notHex.status != 0)
        #expect(notHex.errors.contains("--text"), "\(notHex.errors)")
    }

    /// `att ADDR HEX`: PDUs sent verbatim on the ATT channel, the peer's answer decoded by
    /// the trace decoder. A malformed Read By Group Type Request (a 3-byte group type: a
    /// UUID is 2 or 16), a Read Request cut short and one for handle 0 get the peer's
    /// Error Response (Invalid PDU, Invalid Handle); a
    /// Write Command gets nothing, said after --wait.
    @Test func attSendsAnyPDUAndDecodesTheAnswerOrTheSilence() async throws {
        let harness = try Self.harness.get()
        let transport = RadioPeripheral.transport(harness)
        let handleZero = try await RadioPeripheral.central(["att", RadioPeripheral.address, "0a0000", "--json"] + transport)
        #expect(handleZero.status == 0, "\(handleZero.errors)")
        let packets = handleZero.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let request = try #require(packets.first, "\(handleZero.output)")
        #expect(request["attOpcode"] as? Int == 0x0A && request["direction"] as? String == "sent", "\(request)")
        let answer = try #require(packets.last, "\(handleZero.output)")
        #expect(answer["attOpcode"] as? Int == 0x01 && answer["direction"] as? String == "received", "\(answer)")
        #expect(answer["answers"] as? Int == request["n"] as? Int, "\(answer)")
        let fields = answer["fields"] as? [[String]] ?? []
        #expect(fields.contains { $0.last?.contains("errorCode: Invalid Handle (0x01)") == true }, "\(fields)")

        let malformed = try await RadioPeripheral.central(["att", RadioPeripheral.address, "10 0100 ffff 001122"] + transport)
        #expect(malformed.status == 0, "\(malformed.errors)")
        #expect(malformed.output.contains("< ATT Read By Group Type Request"), "\(malformed.output)")
        #expect(malformed.output.contains("> ATT Error Response"), "\(malformed.output)")
        #expect(malformed.output.contains("requestOpcodeInError: Read By Group Type Request (0x10), attributeHandleInError: 0, errorCode: Invalid PDU (0x04)"), "\(malformed.output)")
        let cut = try await RadioPeripheral.central(["att", RadioPeripheral.address, "0a03"] + transport)
        #expect(cut.status == 0, "\(cut.errors)")
        #expect(cut.output.contains("< ATT Read Request (malformed: truncated"), "\(cut.output)")
        #expect(cut.output.contains("requestOpcodeInError: Read Request (0x0A), attributeHandleInError: 0, errorCode: Invalid PDU (0x04)"), "\(cut.output)")

        let command = try await RadioPeripheral.central(["att", RadioPeripheral.address, "520300C0FFEE", "--wait", "1"] + transport)
        #expect(command.status == 0, "\(command.errors)")
        #expect(command.output.contains("< ATT Write Command"), "\(command.output)")
        #expect(!command.output.contains("> ATT"), "\(command.output)")
        #expect(command.output.contains("no answer from \(RadioPeripheral.address) within 1.0 s"), "\(command.output)")
        #expect(command.output.contains("transaction timeout"), "\(command.output)")
        let silentJSON = try await RadioPeripheral.central(["att", RadioPeripheral.address, "520300C0FFEE", "--wait", "0.5", "--json"] + transport)
        let last = silentJSON.output.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(last?["waitedMilliseconds"] as? Int == 500 && last?.keys.contains("answer") == true, "\(silentJSON.output)")
    }

    /// The value handle the radio's database gives `uuid`.
    func valueHandle(of uuid: String, _ harness: RadioHarness) async throws -> Int {
        let explored = try await RadioPeripheral.central(["explore", RadioPeripheral.address, "--json"] + RadioPeripheral.transport(harness))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(explored.output.utf8)) as? [String: Any])
        let services = object["services"] as? [[String: Any]] ?? []
        let characteristic = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }.first { $0["uuid"] as? String == uuid }
        return try #require(characteristic?["valueHandle"] as? Int)
    }
}
