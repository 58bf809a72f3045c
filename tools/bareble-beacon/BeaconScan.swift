import HCI
import ToolSupport

/// The scan the ranging subcommands (range, monitor, calibrate) share: passive, with every
/// report delivered (ranging needs each one as a sample; a duplicate filter would leave one
/// per device) and a tick every period, over the tools' common scan run.
enum BeaconScan {
    static let period: Duration = .seconds(1)

    static func run(options: TransportOptions, duration: Double?, handle: (ScanRunEvent) throws -> Void) async throws {
        if let duration, !(duration.isFinite && duration > 0 && duration < 1e7) {
            throw ToolError("--duration \(duration) is not a positive number of seconds")
        }
        try await ScanRun.run(
            options: options, filter: ScanFilter(duplicates: .all), active: false,
            duration: duration, tickEvery: period, handle: handle
        )
    }
}
