import Foundation
import Testing
import TestSupport

/// `bareble-beacon range` and `calibrate` against Bumble iBeacons whose RSSI the test moves.
@Suite(.serialized) struct BeaconRanging {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--beacons", "2"]) }

    func transport(_ harness: RadioHarness) -> [String] { ["--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)"] }

    @Test func distanceProximityAndTheClosestBeaconFollowTheRSSI() async throws {
        let harness = try Self.harness.get()
        try await harness.send("rssi beacon1 \(RadioBeacons.measuredPower)")
        try await harness.send("rssi beacon2 -90")
        let tool = try ToolProcess(["range", "--json", "--uuid", RadioBeacons.uuid, "--duration", "15"] + transport(harness))

        // RSSI equal to the measured power: 1 m, near (immediate < 0.5 m <= near < 3 m).
        let near = try await tool.next("ranging beacon 1") { RadioBeacons.minor($0) == 1 && $0["proximity"] as? String != "unknown" }.object
        let distance = try #require(near["distance"] as? Double)
        #expect(abs(distance - 1.0) < 0.1, "\(near)")
        #expect(near["proximity"] as? String == "near")
        #expect((near["accuracy"] as? Double ?? 99) < 0.5, "\(near)")
        #expect(near["measuredPower"] as? Int == -59)
        // -90 dBm: 31 dB below the 1 m reading, 35 m at n = 2: far.
        let far = try await tool.next("ranging beacon 2") { RadioBeacons.minor($0) == 2 && $0["proximity"] as? String != "unknown" }.object
        #expect(far["proximity"] as? String == "far", "\(far)")
        #expect((far["distance"] as? Double ?? 0) > 20, "\(far)")
        let first = try await tool.next("the first closest beacon") { $0["event"] as? String == "closest-changed" }.object
        #expect(RadioBeacons.minor(first["current"] as? [String: Any] ?? [:]) == 1, "\(first)")
        print("ranging: -59 dBm -> \(near["distance"] ?? "?") m \(near["proximity"] ?? "?") (+\(near["accuracy"] ?? "?") m); -90 dBm -> \(far["distance"] ?? "?") m \(far["proximity"] ?? "?")")

        // Swap them: the closest changes once the smoothed readings cross the 2 dB margin.
        try await harness.send("rssi beacon1 -90")
        let swapped = try await harness.send("rssi beacon2 \(RadioBeacons.measuredPower)").written
        let change = try await tool.next("the closest beacon changing") { $0["event"] as? String == "closest-changed" }
        #expect(RadioBeacons.minor(change.object["previous"] as? [String: Any] ?? [:]) == 1, "\(change.text)")
        #expect(RadioBeacons.minor(change.object["current"] as? [String: Any] ?? [:]) == 2, "\(change.text)")
        let latency = change.arrived - swapped
        // Median switch (3 samples, ~0.2 s) + exponential crossing (~0.7 s) + the next tick.
        #expect(latency > .zero && latency < .seconds(3), "\(latency)")
        print("ranging: closest-changed \(latency) after the swap")
        // And the reports settle on the swapped distances.
        _ = try await tool.next("beacon 2 near after the swap") { RadioBeacons.minor($0) == 2 && $0["proximity"] as? String == "near" }
        _ = try await tool.next("beacon 1 far after the swap") { RadioBeacons.minor($0) == 1 && $0["proximity"] as? String == "far" }

        let end = try await tool.interrupt()
        #expect(end.status == 0, "\(end.errors)")
        // Exactly one closest-changed per change: no flapping while the readings are steady.
        #expect(tool.allLines.filter { $0.object["event"] as? String == "closest-changed" }.count == 2)
    }

    @Test func calibrationPrintsTheMedianRSSIOfTheOneMatchingBeacon() async throws {
        let harness = try Self.harness.get()
        try await harness.send("rssi beacon1 -63")
        let tool = try ToolProcess(["calibrate", "--json", "--uuid", RadioBeacons.uuid, "--major", "1", "--minor", "1", "--seconds", "1.5"] + transport(harness))
        let result = try await tool.next("the calibration") { $0["measuredPower"] != nil }.object
        #expect(result["measuredPower"] as? Int == -63, "\(result)")
        #expect(result["configure"] as? Int == -63)
        #expect((result["samples"] as? Int ?? 0) >= 10, "\(result)")
        #expect(result["currentMeasuredPower"] as? Int == -59)
        #expect(try await tool.finish().status == 0)

        // Two beacons match the UUID alone: the tool says how to narrow it.
        let ambiguous = try ToolProcess(["calibrate", "--uuid", RadioBeacons.uuid, "--seconds", "1"] + transport(harness))
        let end = try await ambiguous.finish()
        #expect(end.status != 0)
        #expect(end.errors.contains("2 beacons match"), "\(end.errors)")
        try await harness.send("rssi beacon1 \(RadioBeacons.measuredPower)")
    }
}
