import Beacon
import BluetoothCore

/// `--region` text: `UUID[:MAJOR[:MINOR]]` or `eddystone:NAMESPACE[:INSTANCE]` (hex). The
/// text itself names the region in events, so what the user typed is what they read back.
enum RegionSpec {
    static func parse(_ text: String) throws(RegionSpecError) -> BeaconRegion {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if parts.first?.lowercased() == "eddystone" {
            guard (2...3).contains(parts.count), let namespace = Hex.bytes(parts[1]) else {
                throw RegionSpecError(text, "give eddystone:NAMESPACE[:INSTANCE] with a 10-byte hex namespace and a 6-byte hex instance")
            }
            var instance: [UInt8]?
            if parts.count == 3 {
                guard let bytes = Hex.bytes(parts[2]) else { throw RegionSpecError(text, "the instance \(parts[2]) is not hex: give 12 hex digits") }
                instance = bytes
            }
            do {
                return try BeaconRegion.eddystone(text, namespace: namespace, instance: instance)
            } catch {
                throw RegionSpecError(text, advice(error, text))
            }
        }
        guard (1...3).contains(parts.count) else {
            throw RegionSpecError(text, "give UUID[:MAJOR[:MINOR]] or eddystone:NAMESPACE[:INSTANCE]")
        }
        guard parts[0].filter({ $0 != "-" }).count == 32, let uuid = BluetoothUUID(parts[0]) else {
            throw RegionSpecError(text, "\(parts[0]) is not a proximity UUID: give 32 hex digits, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        var numbers: [UInt16] = []
        for (name, part) in zip(["major", "minor"], parts.dropFirst()) {
            guard let value = UInt16(part) else { throw RegionSpecError(text, "the \(name) \(part) is not a number in 0...65535") }
            numbers.append(value)
        }
        do {
            return try BeaconRegion.iBeacon(text, proximityUUID: uuid, major: numbers.first, minor: numbers.dropFirst().first)
        } catch {
            throw RegionSpecError(text, advice(error, text))
        }
    }

    /// The module's message without its "region NAME: " opening, which ours repeats.
    private static func advice(_ error: BeaconRegionError, _ text: String) -> String {
        let message = error.description
        let opening = "region \(text): "
        return message.hasPrefix(opening) ? String(message.dropFirst(opening.count)) : message
    }
}

struct RegionSpecError: Error, CustomStringConvertible {
    let description: String
    init(_ text: String, _ advice: String) { description = "--region \(text): \(advice)" }
}
