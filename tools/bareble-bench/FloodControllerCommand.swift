import ArgumentParser
import Glibc

/// `bareble-bench flood-controller`: the fake TCP controller on its own, for a test (or a
/// person) that runs a scanning tool against it. Prints `port P`, serves the first host,
/// sends the reports once it scans, prints `sent N`, ends the stream and waits for the host
/// to close.
struct FloodControllerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flood-controller",
        abstract: "A fake H4 controller on 127.0.0.1 that floods advertising reports once scanning is enabled."
    )

    @Option(help: "Reports to send.")
    var reports = 100_000

    @Option(help: "Distinct advertisers.")
    var devices = 1_000

    @Option(help: "Reports per second; 0 sends as fast as the host takes them.")
    var rate = 0

    @Flag(help: "LE Extended Advertising Report events instead of legacy LE Advertising Report events.")
    var extended = false

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let stream = ReportStream(count: reports, devices: devices, seed: 1, legacy: !extended)
        let flood = try FloodController()
        say("port \(flood.port)")
        let controller = try flood.accept()
        _ = try FloodController.send(stream, rate: rate, to: controller)
        say("sent \(reports)")
        controller.finishAndWaitForHost()
    }
}

/// One line to stdout at once, unbuffered: the test driving this process waits for it.
private func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
}
