import ArgumentParser
import Beacon
import BluetoothCore
import HCI
import ToolSupport

/// `bareble-beacon monitor`: Core Location's region monitoring. Enter at the first sighting
/// of a matching beacon; exit after --exit-timeout seconds of silence, evaluated each second,
/// so an exit is reported at most one second after the timeout ran out.
struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Monitor beacon regions: print enter and exit events.",
        discussion: """
            SPEC is UUID[:MAJOR[:MINOR]] (iBeacon) or eddystone:NAMESPACE[:INSTANCE] (Eddystone-UID, \
            hex). Repeat --region for several; events come in the order the regions were given.
            """
    )

    @OptionGroup var options: TransportOptions

    @Option(name: .customLong("region"), help: "A region to monitor (repeatable); see the discussion.")
    var regions: [String] = []

    @Option(name: .customLong("exit-timeout"), help: "Seconds without a sighting before a region is exited (30, as iOS).")
    var exitTimeout = 30.0

    @Flag(help: "One JSON object per event instead of a line of text.")
    var json = false

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    func validate() throws {
        if regions.isEmpty { throw ValidationError("give at least one --region UUID[:MAJOR[:MINOR]] or eddystone:NAMESPACE[:INSTANCE]") }
        for region in regions {
            do { _ = try RegionSpec.parse(region) } catch { throw ValidationError(error.description) }
        }
        guard exitTimeout.isFinite, exitTimeout > 0, exitTimeout < 1e6 else { throw ValidationError("--exit-timeout \(exitTimeout) must be a positive number of seconds") }
    }

    func run() async throws {
        var monitor = RegionMonitor(exitTimeout: UInt64(exitTimeout * 1e9))
        let start = MonotonicClock.nanoseconds()
        for text in regions {
            monitor.startMonitoring(try RegionSpec.parse(text), now: start)
        }
        if !json {
            writeOut("monitoring \(monitor.regions.map(\.description).joined(separator: ", ")); exit after \(fixedPoint(exitTimeout, places: 1)) s of silence\n")
        }
        let json = json
        try await BeaconScan.run(options: options, duration: duration) { event in
            switch event {
            case let .advertisement(advertisement):
                guard let identity = BeaconFrame.decode(advertisement)?.identity else { return }
                for change in monitor.observe(identity, at: advertisement.timestamp) {
                    Self.show(change, beacon: identity, address: advertisement.address, time: seconds(from: start, to: advertisement.timestamp), json: json)
                }
            case .caughtUp:
                break
            case let .tick(now):
                for change in monitor.tick(now: now) {
                    Self.show(change, beacon: nil, address: nil, time: seconds(from: start, to: now), json: json)
                }
            }
        }
    }

    static func show(_ event: RegionEvent, beacon: BeaconIdentity?, address: DeviceAddress?, time: Double, json: Bool) {
        let (name, region): (String, BeaconRegion) = switch event {
        case let .entered(region): ("enter", region)
        case let .exited(region): ("exit", region)
        }
        if json {
            var members: [(String, JSONValue)] = [("event", .string(name)), ("time", .decimal(time, places: 3)), ("region", .string(region.identifier))]
            if let beacon { members.append(("by", .object(identityMembers(beacon)))) }
            if let address { members.append(("address", .string(address.address.description))) }
            writeOut(JSONValue.object(members).text + "\n")
        } else {
            let by = beacon.map { " (heard \($0))" } ?? ""
            writeOut("\(fixedPoint(time, places: 1)) s  \(name) \(region)\(by)\n")
        }
    }
}
