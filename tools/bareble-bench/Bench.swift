import ArgumentParser
@preconcurrency import Glibc
import ToolSupport

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bareble-bench",
        abstract: "BareBLE's benchmarks: figures beside a baseline measured in the same run.",
        subcommands: [ScanBenchmark.self, ScanToolBenchmark.self, FloodControllerCommand.self, NotificationBenchmark.self, ServerBenchmark.self, ExploreBenchmark.self, SoakBenchmark.self, TraceBenchmark.self]
    )

    /// Line-buffered output, also into a file or a pipe: a benchmark that runs for minutes
    /// shows each figure when it is measured, not all of them at exit. The stack logs as the
    /// tools do (warnings and worse, or `$BAREBLE_LOG`'s level), not at swift-log's default
    /// info, which put two lines per soak cycle inside the measured loop.
    static func main() async {
        setvbuf(stdout, nil, _IOLBF, 0)
        do {
            ToolLogging.bootstrap(level: try ToolLogging.level(verbosity: 0, environment: getenv(ToolLogging.environmentVariable).map { String(cString: $0) }))
        } catch {
            fputs("bareble-bench: \(error)\n", stderr)
            Glibc.exit(2)
        }
        await main(nil)
    }
}
