import ArgumentParser
import Beacon
import BluetoothCore
import HCI
import ToolSupport

/// `bareble-beacon calibrate`: the measured power to configure in a beacon, from its RSSI
/// with the receiver held 1 m away. The median is used because fast fading gives single
/// readings 10-30 dB off, which would drag a mean down.
struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a beacon held at 1 m and print the measured power to configure.",
        discussion: "Exactly one beacon must match the selection; narrow it with --uuid, --major, --minor or --eddystone."
    )

    @OptionGroup var options: TransportOptions
    @OptionGroup var selection: BeaconSelection

    @Option(help: "How long to measure.")
    var seconds = 10.0

    @Flag(help: "The result as one JSON object.")
    var json = false

    func validate() throws {
        guard seconds.isFinite, seconds > 0, seconds < 1e6 else { throw ValidationError("--seconds \(seconds) must be a positive number") }
    }

    func run() async throws {
        let matches = selection.matcher()
        // Bounded whatever the air carries: one beacon is wanted, so a few identities are
        // enough to say which matched (the rest only counted), and the median of the first
        // samplesKept readings is the calibration.
        let identitiesKept = 16, samplesKept = 100_000
        var samples: [BeaconIdentity: [Int]] = [:]
        var frames: [BeaconIdentity: BeaconFrame] = [:]
        var otherIdentities = 0
        try await BeaconScan.run(options: options, duration: seconds) { event in
            guard case let .advertisement(advertisement) = event, let rssi = advertisement.rssi,
                  let frame = BeaconFrame.decode(advertisement), let identity = frame.identity, matches(identity) else { return }
            guard samples[identity] != nil || samples.count < identitiesKept else {
                otherIdentities += 1
                return
            }
            if samples[identity, default: []].count < samplesKept { samples[identity, default: []].append(Int(rssi)) }
            frames[identity] = frame
        }
        guard samples.count == 1, otherIdentities == 0, let (identity, readings) = samples.first, let frame = frames[identity] else {
            if samples.isEmpty { throw ToolError("no matching beacon was heard in \(fixedPoint(seconds, places: 1)) s: is it on, and does the selection match it?") }
            let list = samples.keys.sorted().map(\.description).joined(separator: "; ")
            let more = otherIdentities > 0 ? " and \(otherIdentities) advertisements of still others" : ""
            throw ToolError("\(samples.count) beacons match (\(list))\(more): narrow the selection with --uuid, --major, --minor")
        }
        let calibration = Calibration(readings)
        // Eddystone configures its power at 0 m, which its specification puts 41 dB above 1 m.
        let isEddystone = if case .eddystone = frame { true } else { false }
        let configured = isEddystone ? calibration.median + BeaconFrame.eddystoneLossAtOneMeter : calibration.median
        if json {
            var members: [(String, JSONValue)] = identityMembers(identity)
            members += [
                ("measuredPower", .int(calibration.median)),
                ("configure", .int(configured)),
                ("samples", .int(readings.count)),
                ("spread", .decimal(calibration.spread, places: 1)),
                ("min", .int(calibration.minimum)),
                ("max", .int(calibration.maximum)),
                ("currentMeasuredPower", frame.measuredPowerAtOneMeter.map { .int($0) } ?? .null),
            ]
            writeOut(JSONValue.object(members).text + "\n")
            return
        }
        var text = "\(identity): measured power \(calibration.median) dBm at 1 m "
        text += "(median of \(readings.count) samples over \(fixedPoint(seconds, places: 1)) s, spread \(fixedPoint(calibration.spread, places: 1)) dB, range \(calibration.minimum)...\(calibration.maximum) dBm)\n"
        if isEddystone {
            text += "configure TX power at 0 m: \(configured) dBm (--power \(configured))\n"
        } else {
            text += "configure measured power: \(configured) dBm (--power \(configured))\n"
        }
        if let current = frame.measuredPowerAtOneMeter, current != calibration.median {
            text += "it now advertises \(current) dBm at 1 m: distances are off by a factor of about \(fixedPoint(distanceFactor(current - calibration.median), places: 2))\n"
        }
        writeOut(text)
    }

    /// How far distances are off when the configured power is off by `decibels` (n = 2).
    func distanceFactor(_ decibels: Int) -> Double {
        PathLossModel().distance(rssi: 0, measuredPower: Double(abs(decibels)))
    }
}

/// A median with its robust spread (1.4826 x the median absolute deviation, a standard
/// deviation that outliers do not inflate, as the ranger's accuracy uses).
struct Calibration {
    let median: Int
    let spread: Double
    let minimum: Int
    let maximum: Int

    init(_ readings: [Int]) {
        let sorted = readings.sorted()
        let middle = Self.median(sorted)
        median = middle
        let deviations = sorted.map { abs($0 - middle) }.sorted()
        spread = 1.4826 * Double(Self.median(deviations))
        minimum = sorted.first ?? 0
        maximum = sorted.last ?? 0
    }

    /// The lower middle for an even count, so the result is a reading that was really seen.
    static func median(_ sorted: [Int]) -> Int {
        sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
    }
}
