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

    @Option(help: "Reports in the one-at-a-time latency run.")
    var latencyReports = 50_000

    @Flag(help: "Skip the Bumble baseline.")
    var skipBumble = false

    func run() async throws {
        let stream = ReportStream(count: reports, devices: devices, seed: 1)
        print("bareble-bench scan: \(reports) LE Extended Advertising Report events, \(devices) advertisers, 31-byte payloads")
        let decode = DecodeBenchmark.run(stream)
        let decodeRate = 1e9 / decode.nanosecondsPerReport
        print("decode only        \(padded(fixed(decode.nanosecondsPerReport), 10)) ns/report  = \(padded(fixed(decodeRate), 10)) reports/s per core   (target 1,000,000)")
        print("decode allocations \(padded(fixed(decode.allocationsPerReport, 2), 10)) per report, \(fixed(decode.bytesPerReport)) bytes per report")

        let endToEnd = try await EndToEndBenchmark()
        // Warm up allocators, caches and the duplicate tables once.
        _ = await endToEnd.throughput(ReportStream(count: min(reports, 20_000), devices: devices, seed: 2))
        let throughput = await endToEnd.throughput(stream)
        print("end to end         \(padded(fixed(throughput.reportsPerSecond), 10)) reports/s  (socketpair, H4 framer, driver, scanner, callback; target 300,000)")
        print("e2e allocations    \(padded(fixed(throughput.allocationsPerReport, 2), 10)) per report, \(fixed(throughput.bytesPerReport)) bytes per report")
        let latency = await endToEnd.latency(ReportStream(count: latencyReports, devices: devices, seed: 3))
        print("host latency       p50 \(fixed(latency.p50, 1)) µs, p99 \(fixed(latency.p99, 1)) µs, p99.9 \(fixed(latency.p999, 1)) µs, max \(fixed(latency.max, 1)) µs"
              + "  (\(grouped(latency.samples)) reports one at a time, write to callback; target p99 < 50 µs)")
        await endToEnd.finish()

        guard !skipBumble else { return }
        let bumble = try BumbleBaseline.run(
            "bumble_scan_baseline.py", stream: stream.concatenated, arguments: [String(stream.frames.count)],
            key: "reports_per_second", python: python)
        print("Bumble host        \(padded(fixed(bumble), 10)) reports/s  (same stream, in-process H4 parser, Host, Device 'advertisement')")
        print("ratio              \(padded(fixed(throughput.reportsPerSecond / bumble, 1), 10)) x Bumble end to end, \(fixed(decodeRate / bumble, 1)) x decode only   (target 30 x)")
    }
}
