import ArgumentParser
import Beacon
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// `bareble-beacon range`: Core Location's ranging on the command line. Each second the
/// ranger's report is drawn as a table (terminal) or written as JSON lines, one per beacon,
/// plus a line whenever the closest beacon changes.
struct Range: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Range beacons: distance, accuracy and proximity every second.",
        discussion: """
            Distance comes from the log-distance path-loss model against each beacon's measured \
            power (RSSI at 1 m): good to a proximity class (immediate < 0.5 m, near < 3 m, far), \
            not to a metre. See specs/beacon.md. Stop with Ctrl-C or --duration.
            """
    )

    @OptionGroup var options: TransportOptions
    @OptionGroup var selection: BeaconSelection

    @Flag(help: "One JSON object per ranged beacon per second (the default when stdout is not a terminal).")
    var json = false

    @Option(name: .customLong("path-loss-exponent"), help: "The path-loss exponent n: 2 in free space, 1.6-1.8 in corridors, 2.7-4 through furniture and people.")
    var exponent = 2.0

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    func validate() throws {
        guard exponent.isFinite, exponent > 0 else { throw ValidationError("--path-loss-exponent \(exponent) must be a positive number (2 in free space)") }
    }

    func run() async throws {
        var configuration = BeaconRanger.Configuration()
        configuration.model = PathLossModel(exponent: exponent)
        var ranger = BeaconRanger(configuration: configuration)
        let matches = selection.matcher()
        let output = RangingOutput(live: !json && isatty(1) == 1, start: MonotonicClock.nanoseconds())
        try await BeaconScan.run(options: options, duration: duration) { event in
            switch event {
            case let .advertisement(advertisement):
                guard let rssi = advertisement.rssi, let frame = BeaconFrame.decode(advertisement),
                      let identity = frame.identity, matches(identity) else { return }
                ranger.observe(frame, rssi: rssi, at: advertisement.timestamp, address: advertisement.address)
            case .caughtUp:
                break
            case let .tick(now):
                if let report = ranger.tick(now: now) { output.show(report) }
            }
        }
    }
}

/// The two renderings of ranging reports.
struct RangingOutput {
    let live: Bool
    let start: UInt64

    init(live: Bool, start: UInt64) {
        self.live = live
        self.start = start
    }

    func show(_ report: RangingReport) {
        live ? draw(report) : writeJSON(report)
    }

    func writeJSON(_ report: RangingReport) {
        let time = JSONValue.decimal(seconds(from: start, to: report.time), places: 3)
        var text = ""
        for beacon in report.beacons {
            var members: [(String, JSONValue)] = [("event", .string("ranged")), ("time", time)]
            members += identityMembers(beacon.identity)
            members += [
                ("address", beacon.address.map { .string($0.address.description) } ?? .null),
                ("rssi", .int(Int(beacon.lastRSSI))),
                ("smoothedRSSI", beacon.rssi.map { .decimal($0, places: 1) } ?? .null),
                ("measuredPower", .int(beacon.measuredPower)),
                ("distance", beacon.distance.map { .decimal($0, places: 2) } ?? .null),
                ("accuracy", beacon.accuracy.map { .decimal($0, places: 2) } ?? .null),
                ("proximity", .string(beacon.proximity.description)),
                ("samples", .int(beacon.sampleCount)),
                ("lastSeen", .decimal(seconds(from: beacon.lastHeard, to: report.time), places: 1)),
                ("closest", .bool(beacon.identity == report.closest)),
            ]
            text += JSONValue.object(members).text + "\n"
        }
        if let change = report.closestChange {
            let object = JSONValue.object([
                ("event", .string("closest-changed")), ("time", time),
                ("previous", change.previous.map { .object(identityMembers($0)) } ?? .null),
                ("current", change.current.map { .object(identityMembers($0)) } ?? .null),
            ])
            text += object.text + "\n"
        }
        writeOut(text)
    }

    func draw(_ report: RangingReport) {
        var screen = "\u{1B}[H\u{1B}[2J"
        screen += "\(report.beacons.count) beacons, nearest first; closest: \(report.closest.map(\.description) ?? "none"); Ctrl-C stops\n"
        let header = ["BEACON", "RSSI", "SMOOTHED", "DISTANCE", "ACCURACY", "PROXIMITY", "LAST SEEN"]
        var table = [header]
        for beacon in report.beacons {
            table.append([
                (beacon.identity == report.closest ? "* " : "  ") + beacon.identity.description,
                "\(beacon.lastRSSI) dBm",
                beacon.rssi.map { fixedPoint($0, places: 1) + " dBm" } ?? "-",
                beacon.distance.map { fixedPoint($0, places: 2) + " m" } ?? "-",
                beacon.accuracy.map { "+" + fixedPoint($0, places: 2) + " m" } ?? "-",
                beacon.proximity.description,
                fixedPoint(seconds(from: beacon.lastHeard, to: report.time), places: 1) + "s ago",
            ])
        }
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        for line in table {
            screen += line.indices.map { line[$0].padding(to: widths[$0]) }.joined(separator: "  ") + "\n"
        }
        if let change = report.closestChange {
            screen += "closest changed: \(change.previous.map(\.description) ?? "none") -> \(change.current.map(\.description) ?? "none")\n"
        }
        writeOut(screen)
    }
}
