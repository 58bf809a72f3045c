import ArgumentParser
@preconcurrency import Glibc

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bareble-bench",
        abstract: "BareBLE's benchmarks: figures beside a baseline measured in the same run.",
        subcommands: [ScanBenchmark.self, ScanToolBenchmark.self, FloodControllerCommand.self, NotificationBenchmark.self, ServerBenchmark.self, ExploreBenchmark.self, SoakBenchmark.self, TraceBenchmark.self]
    )

    /// Line-buffered output, also into a file or a pipe: a benchmark that runs for minutes
    /// shows each figure when it is measured, not all of them at exit.
    static func main() async {
        setvbuf(stdout, nil, _IOLBF, 0)
        await main(nil)
    }
}
