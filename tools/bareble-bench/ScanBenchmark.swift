import ArgumentParser
import BluetoothCore
import Glibc
import HCI
import HCITransport

/// `bareble-bench scan`: advertising reports through BareBLE's decode path and through the
/// real transport and scanner, beside the same stream through Bumble's host.
struct ScanBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Reports per second, host latency and allocations of the scan path, against Bumble's host on the same stream."
    )

    @Option(help: "Reports in the throughput stream.")
    var reports = 300_000

    @Option(help: "Distinct advertisers in the stream.")
    var devices = 1_000

    @Option(help: "Python with bumble installed, for the baseline (default: the checkout's .venv, else python3).")
    var python: String?

    @Flag(help: "Skip the Bumble baseline.")
    var skipBumble = false

    func run() async throws {
        let stream = ReportStream(count: reports, devices: devices, seed: 1)
        print("bareble-bench scan: \(reports) LE Extended Advertising Report events, \(devices) advertisers, 31-byte payloads")
        let decode = DecodeBenchmark.run(stream)
        print("decode only: \(fixed(decode.nanosecondsPerReport)) ns/report (\(fixed(1e9 / decode.nanosecondsPerReport)) reports/s per core), "
              + "\(fixed(decode.allocationsPerReport, 2)) allocations and \(fixed(decode.bytesPerReport)) bytes per report")
    }
}
