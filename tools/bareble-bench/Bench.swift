import ArgumentParser

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bareble-bench",
        abstract: "BareBLE's benchmarks: figures beside a baseline measured in the same run.",
        subcommands: [ScanBenchmark.self, ScanToolBenchmark.self, FloodControllerCommand.self, NotificationBenchmark.self, ServerBenchmark.self, ExploreBenchmark.self, SoakBenchmark.self, TraceBenchmark.self]
    )
}
