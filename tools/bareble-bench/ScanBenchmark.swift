import ArgumentParser
import BluetoothCore
import Glibc
import HCI
import HCITransport

/// `bareble-bench scan`: advertising reports through BareBLE's decode path and through the
/// real transport and scanner (callback and AsyncSequence consumers, extended and legacy
/// reports), beside the same streams through Bumble's host, as shipped and with its
/// per-packet debug formatting removed; host latency with the blocking and the spinning
/// reader, and what spinning costs in CPU.
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

    @Option(help: "The spinning reader's window, in microseconds.")
    var spinWindow = 1_000

    @Flag(help: "Skip the Bumble baseline.")
    var skipBumble = false

    func run() async throws {
        print("bareble-bench scan: \(reports) reports per stream, \(devices) advertisers, 31-byte payloads; \(loadAverage())")
        let extended = ReportStream(count: reports, devices: devices, seed: 1)
        let decode = DecodeBenchmark.run(extended)
        let decodeRate = 1e9 / decode.nanosecondsPerReport
        print("decode only        \(padded(fixed(decode.nanosecondsPerReport), 10)) ns/report  = \(padded(fixed(decodeRate), 10)) reports/s per core   (extended reports; target 1,000,000)")
        print("decode allocations \(padded(fixed(decode.allocationsPerReport, 2), 10)) per report, \(fixed(decode.bytesPerReport)) bytes per report")

        for legacy in [false, true] {
            let stream = legacy ? ReportStream(count: reports, devices: devices, seed: 1, legacy: true) : extended
            let kind = legacy ? "legacy" : "extended"
            print("-- \(kind) advertising reports (socketpair, H4 framer, driver, scanner, consumer)")
            let callback = try await throughput(stream, consumer: .callback)
            print("callback           \(padded(fixed(callback.reportsPerSecond), 10)) reports/s  (on the reader thread; target 300,000)")
            print("  allocations      \(padded(fixed(callback.allocationsPerReport, 2), 10)) per report, \(fixed(callback.bytesPerReport)) bytes per report")
            // A buffer the size of the stream: the figure is the consumer's own pace, with
            // nothing dropped (a smaller buffer drops, and says so, when the task is slower).
            let async = try await throughput(stream, consumer: .stream(bufferLimit: reports))
            print("AsyncSequence      \(padded(fixed(async.reportsPerSecond), 10)) reports/s  (for try await in scanner.advertisements(); target 1,000,000)")
            guard !skipBumble else { continue }
            let shipped = try bumble(stream, patched: false)
            let patched = try bumble(stream, patched: true)
            print("Bumble as shipped  \(padded(fixed(shipped), 10)) reports/s  (same stream, in-process H4 parser, Host, Device 'advertisement')")
            print("Bumble, no debug   \(padded(fixed(patched), 10)) reports/s  (the same, with Host.on_hci_packet's per-packet debug f-string removed)")
            print("ratio              \(padded(fixed(callback.reportsPerSecond / shipped, 1), 10)) x Bumble as shipped, \(fixed(callback.reportsPerSecond / patched, 1)) x Bumble without debug formatting (callback)")
            print("                   \(padded(fixed(async.reportsPerSecond / shipped, 1), 10)) x Bumble as shipped, \(fixed(async.reportsPerSecond / patched, 1)) x Bumble without debug formatting (AsyncSequence)")
        }

        print("-- host latency, \(grouped(latencyReports)) extended reports one at a time, write to callback")
        let window = ReaderWait.spinning(window: .microseconds(spinWindow))
        for (name, wait) in [("blocking reader", ReaderWait.blocking), ("spinning reader", window)] {
            let endToEnd = try await EndToEndBenchmark(wait: wait)
            _ = await endToEnd.latency(ReportStream(count: min(latencyReports, 5_000), devices: devices, seed: 2))
            let latency = await endToEnd.latency(ReportStream(count: latencyReports, devices: devices, seed: 3))
            let share = await endToEnd.cpuShare(ReportStream(count: 1_000, devices: devices, seed: 4), rate: 1_000)
            await endToEnd.finish()
            print("\(name.padding(toLength: 18))p50 \(fixed(latency.p50, 1)) µs, p99 \(fixed(latency.p99, 1)) µs, p99.9 \(fixed(latency.p999, 1)) µs, max \(fixed(latency.max, 1)) µs"
                  + "; CPU at 1,000 reports/s: \(fixed(share * 100, 1)) % of a core" + (name == "spinning reader" ? " (window \(spinWindow) µs)" : ""))
        }
        print("                   (targets with the spinning reader: p99 < 20 µs, p99.9 < 50 µs on a quiet machine; \(loadAverage()))")
    }

    private func throughput(_ stream: ReportStream, consumer: EndToEndBenchmark.Consumer) async throws -> EndToEndBenchmark.Throughput {
        let endToEnd = try await EndToEndBenchmark(consumer: consumer)
        // Warm up allocators, caches and the duplicate tables once.
        _ = await endToEnd.throughput(ReportStream(count: min(reports, 20_000), devices: devices, seed: 2, legacy: stream.slotEndFromBack != 0))
        let result = await endToEnd.throughput(stream)
        await endToEnd.finish()
        return result
    }

    private func bumble(_ stream: ReportStream, patched: Bool) throws -> Double {
        try BumbleBaseline.run(
            "bumble_scan_baseline.py", stream: stream.concatenated,
            arguments: [String(stream.frames.count)] + (patched ? ["--no-debug-format"] : []),
            key: "reports_per_second", python: python)
    }
}

/// "load 8.56 9.69 6.61": the 1, 5 and 15 minute load averages, printed beside figures
/// measured on a shared machine.
func loadAverage() -> String {
    var loads = [Double](repeating: 0, count: 3)
    guard getloadavg(&loads, 3) == 3 else { return "load unknown" }
    return "load " + loads.map { fixed($0, 2) }.joined(separator: " ")
}

extension String {
    func padding(toLength width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
