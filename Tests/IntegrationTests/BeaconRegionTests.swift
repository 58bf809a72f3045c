import Foundation
import Testing
import TestSupport

/// `bareble-beacon monitor` against Bumble iBeacons that the test silences and resumes.
@Suite(.serialized) struct BeaconRegions {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--beacons", "2"]) }

    @Test func enterOnAppearanceExitWithinTheTimeoutPlusOnePeriod() async throws {
        let harness = try Self.harness.get()
        try await harness.send("stop-beacon 2")
        let one = "\(RadioBeacons.uuid):1"
        let two = "\(RadioBeacons.uuid):1:2"
        let exitTimeout = 3.0
        let tool = try ToolProcess([
            "monitor", "--json", "--region", two, "--region", one, "--exit-timeout", "\(exitTimeout)", "--duration", "25",
            "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)",
        ])
        // Beacon 1 is on: the UUID+major region is entered; beacon 2 is silent.
        let first = try await tool.next("enter \(one)") { $0["event"] as? String == "enter" }.object
        #expect(first["region"] as? String == one, "\(first)")

        // Taken as the line goes out, so an enter that came before it fails below.
        let started = try await harness.send("start-beacon 2").written
        let enter = try await tool.next("enter \(two)") { $0["event"] as? String == "enter" }
        #expect(enter.object["region"] as? String == two, "\(enter.text)")
        #expect(RadioBeacons.minor(enter.object["by"] as? [String: Any] ?? [:]) == 2)
        let enterLatency = enter.arrived - started
        #expect(enterLatency > .zero && enterLatency < .seconds(1), "\(enterLatency)")

        let stopped = try await harness.send("stop-beacon 2")
        let exit = try await tool.next("exit \(two)", timeout: .seconds(8)) { $0["event"] as? String == "exit" }
        #expect(exit.object["region"] as? String == two, "\(exit.text)")
        // The last sighting lies between the line going out (less one advertising interval)
        // and its ack; the exit comes at the first 1 s tick after the timeout ran out, so
        // timeout <= exit - last sighting <= timeout + period (+ a little for the pipes).
        let exitLatency = exit.arrived - stopped.written
        #expect(exitLatency >= .seconds(exitTimeout - 0.1), "\(exitLatency)")
        #expect(exit.arrived - stopped.acknowledged <= .seconds(exitTimeout + 1 + 0.5), "\(exit.arrived - stopped.acknowledged)")
        print("monitor: enter \(enterLatency) after start-beacon, exit \(exitLatency) after stop-beacon (timeout \(exitTimeout) s + period 1 s)")

        let end = try await tool.interrupt()
        #expect(end.status == 0, "\(end.errors)")
        // Beacon 1 never stopped: its region was entered once and never left.
        let events = tool.allLines.compactMap { line in line.object["event"].map { "\($0) \(line.object["region"] ?? "")" } }
        #expect(events == ["enter \(one)", "enter \(two)", "exit \(two)"], "\(events)")
        try await harness.send("start-beacon 2")
    }

    /// Both ends are the tool: one exposed controller transmits Eddystone-UID, another
    /// monitors its namespace and ranges it (Eddystone's 0 m power less 41 dB at 1 m).
    @Test func anEddystoneFromTheToolIsEnteredAndExited() async throws {
        let harness = try Self.harness.get()
        let transport = ["--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"]
        let namespace = "00112233445566778899", instance = "AABBCCDDEEFF"
        let monitor = try ToolProcess(["monitor", "--json", "--region", "eddystone:\(namespace)", "--exit-timeout", "1", "--duration", "15"] + transport)
        let range = try ToolProcess(["range", "--json", "--eddystone", "--duration", "15"] + transport)
        let transmitter = try ToolProcess(["advertise", "eddystone-uid", "--namespace", namespace, "--instance", instance, "--power", "-20", "--interval", "50", "--duration", "2"] + transport)
        let announced = try await transmitter.next("the advertising line") { _ in true }
        #expect(announced.text.contains("0201060303AAFE1716AAFE00EC\(namespace)\(instance)0000"), "\(announced.text)")
        let enter = try await monitor.next("enter") { $0["event"] as? String == "enter" }.object
        let by = enter["by"] as? [String: Any] ?? [:]
        #expect(by["namespace"] as? String == namespace && by["instance"] as? String == instance, "\(enter)")
        let first = try await range.next("the Eddystone ranged") { $0["type"] as? String == "eddystone-uid" && $0["proximity"] as? String != "unknown" }.object
        #expect(first["measuredPower"] as? Int == -61, "\(first)")
        // Only Eddystone is ranged with --eddystone alone (the radio's iBeacons are not).
        #expect(try await transmitter.finish().status == 0)
        let exit = try await monitor.next("exit", timeout: .seconds(5)) { $0["event"] as? String == "exit" }.object
        #expect(exit["region"] as? String == "eddystone:\(namespace)")
        #expect(try await monitor.interrupt().status == 0)
        #expect(try await range.interrupt().status == 0)
        let ranged = range.allLines.filter { $0.object["event"] as? String == "ranged" }
        #expect(!ranged.isEmpty && ranged.allSatisfy { $0.object["type"] as? String == "eddystone-uid" }, "\(range.allLines.map(\.text))")
    }

    @Test func aBadRegionSaysHowToWriteOne() async throws {
        let tool = try ToolProcess(["monitor", "--region", "1234:5"])
        let end = try await tool.finish()
        #expect(end.status != 0)
        #expect(end.errors.contains("32 hex digits"), "\(end.errors)")
    }
}
