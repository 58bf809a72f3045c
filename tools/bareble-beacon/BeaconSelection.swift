import ArgumentParser
import Beacon
import BluetoothCore

/// Which beacons a ranging or calibration run looks at: --uuid [--major [--minor]] for
/// iBeacons, --eddystone for Eddystone; nothing given means every beacon.
struct BeaconSelection: ParsableArguments {
    @Option(help: "Only iBeacons with this proximity UUID (32 hex digits, dashes optional).")
    var uuid: String?

    @Option(help: "Only iBeacons with this major (needs --uuid).")
    var major: Int?

    @Option(help: "Only iBeacons with this minor (needs --major).")
    var minor: Int?

    @Flag(help: "Eddystone beacons (alone: only Eddystone; with --uuid: those too).")
    var eddystone = false

    func validate() throws {
        _ = try region()
    }

    /// The iBeacon part as a region, so matching is the region monitor's own rule.
    func region() throws -> BeaconRegion? {
        guard let uuid else {
            if major != nil || minor != nil { throw ValidationError("--major and --minor need --uuid: give the proximity UUID too") }
            return nil
        }
        guard uuid.filter({ $0 != "-" }).count == 32, let proximityUUID = BluetoothUUID(uuid) else {
            throw ValidationError("--uuid \(uuid) is not a proximity UUID: give 32 hex digits, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        for (name, value) in [("--major", major), ("--minor", minor)] {
            if let value, !(0...0xFFFF).contains(value) { throw ValidationError("\(name) \(value) is outside 0...65535") }
        }
        do {
            return try BeaconRegion.iBeacon("selection", proximityUUID: proximityUUID, major: major.map(UInt16.init), minor: minor.map(UInt16.init))
        } catch {
            throw ValidationError("--minor needs --major: give both or neither")
        }
    }

    /// A matcher built once (validation already passed).
    func matcher() -> @Sendable (BeaconIdentity) -> Bool {
        let region = try? region()
        let everything = region == nil && !eddystone
        let eddystone = eddystone
        return { identity in
            if everything { return true }
            if let region, region.contains(identity) { return true }
            if eddystone {
                switch identity {
                case .eddystoneUID, .eddystoneURL, .eddystoneEID: return true
                case .iBeacon, .altBeacon: return false
                }
            }
            return false
        }
    }
}
