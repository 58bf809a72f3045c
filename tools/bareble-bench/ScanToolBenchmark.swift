import ArgumentParser
import BluetoothCore
import Dispatch
import Glibc
import HCITransport
import Synchronization

/// `bareble-bench scan-tool`: the scan tools end to end, as a user runs them. A fake H4
/// controller on TCP (``FloodController``) sends advertising reports into
/// `bareble-central scan --json --duplicates all` and into Bumble's `bumble-scan`, each
/// writing into a pipe this process reads as fast as it can, counting what was printed
/// (and, for BareBLE, what the tool says it dropped).
struct ScanToolBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan-tool",
        abstract: "bareble-central scan --json and bumble-scan against a fake TCP controller, output into a pipe."
    )

    @Option(help: "Reports per run.")
    var reports = 300_000

    @Option(help: "Distinct advertisers.")
    var devices = 1_000

    @Option(help: "Paced rates to run besides the full flood (reports per second).")
    var rates: [Int] = [100_000]

    @Flag(help: "Extended instead of legacy advertising reports.")
    var extended = false

    @Option(help: "Python with bumble installed (default: the checkout's .venv, else python3).")
    var python: String?

    @Flag(help: "Skip bumble-scan.")
    var skipBumble = false

    struct Outcome {
        var printed = 0
        var dropped = 0
        var seconds = 0.0
        var cpuSeconds = 0.0
        var status: Int32 = 0
        var errors = ""
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let stream = ReportStream(count: reports, devices: devices, seed: 1, legacy: !extended)
        print("bareble-bench scan-tool: \(grouped(reports)) \(extended ? "extended" : "legacy") advertising reports from \(devices) advertisers over TCP, tool output into a pipe; \(loadAverage())")
        let central = executableBeside("bareble-central")
        let bumble = try bumbleScan()
        for rate in rates + [0] {
            let rateText = rate == 0 ? "full flood" : "\(grouped(rate))/s"
            let ours = try measure(stream, rate: rate) { port in
                [central, "scan", "--transport", "tcp:127.0.0.1:\(port)", "--json", "--duplicates", "all"]
            }
            print("\(rateText.padding(toLength: 11)) bareble-central  \(describe(ours))")
            guard !skipBumble else { continue }
            let theirs = try measure(stream, rate: rate) { port in
                bumble + ["--passive", "--filter-duplicates", "false", "tcp-client:127.0.0.1:\(port)"]
            }
            print("\(rateText.padding(toLength: 11)) bumble-scan      \(describe(theirs))")
            print("\(String().padding(toLength: 11)) ratio            \(fixed(rateOf(ours) / rateOf(theirs), 1)) x bumble-scan's lines per second; \(loadAverage())")
        }
    }

    private func rateOf(_ outcome: Outcome) -> Double { Double(outcome.printed) / outcome.seconds }

    private func describe(_ outcome: Outcome) -> String {
        var text = "\(padded(fixed(rateOf(outcome)), 9)) advertisements/s printed; printed \(grouped(outcome.printed)) + dropped \(grouped(outcome.dropped)) = \(grouped(outcome.printed + outcome.dropped)) of \(grouped(reports))"
        text += "; \(fixed(outcome.cpuSeconds * 1e6 / Double(max(1, outcome.printed)), 1)) µs CPU per line"
        if outcome.status != 0 && outcome.printed + outcome.dropped != reports { text += "; exit \(outcome.status): \(outcome.errors)" }
        return text
    }

    /// One run: the controller listens, the tool connects, reports go out, the connection
    /// closes once they are all sent, and the tool's output is read to its end.
    private func measure(_ stream: ReportStream, rate: Int, command: (Int) -> [String]) throws -> Outcome {
        let flood = try FloodController()
        let child = try ToolChild(command(flood.port))
        let counter = OutputCounter(fd: child.output)
        let done = DispatchSemaphore(value: 0)
        Thread.detach {
            counter.readToEnd()
            done.signal()
        }
        let controller = try flood.accept()
        let (start, _) = try FloodController.send(stream, rate: rate, to: controller)
        controller.finishAndWaitForHost()
        guard done.wait(timeout: .now() + .seconds(600)) == .success else {
            child.interrupt()
            throw BenchError("the tool did not finish its output within 600 s")
        }
        let (status, cpu, _) = child.wait()
        var outcome = counter.outcome
        outcome.seconds = Double(counter.lastOutput - start) / 1e9
        outcome.cpuSeconds = cpu
        outcome.status = status
        outcome.errors = child.errors()
        return outcome
    }

    private func bumbleScan() throws -> [String] {
        let script = try VirtualRadio.findScript()
        let interpreter = python ?? VirtualRadio.findPython(script: script)
        return [interpreter, "-c", "from bumble.apps.scan import main; main()"]
    }

    private func executableBeside(_ name: String) -> String {
        let me = CommandLine.arguments[0]
        guard let slash = me.lastIndex(of: "/") else { return name }
        return String(me[...slash]) + name
    }
}

/// Counts what a tool printed, reading its pipe in 1 MiB reads: BareBLE's JSON lines (an
/// advertisement each, or a `dropped` event whose count is summed) and bumble-scan's
/// advertisements (each starts a line with ">>> ").
final class OutputCounter: @unchecked Sendable {
    private let fd: Int32
    /// Written by the reading thread only, read after it signalled the end.
    private(set) var outcome = ScanToolBenchmark.Outcome()
    private(set) var lastOutput: UInt64 = 0

    init(fd: Int32) { self.fd = fd }

    func readToEnd() {
        let size = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        var line: [UInt8] = []
        var atLineStart = true
        let droppedPrefix = Array(#"{"event":"dropped","count":"#.utf8)
        while true {
            let count = read(fd, buffer, size)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            lastOutput = MonotonicClock.nanoseconds()
            for index in 0..<count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\n") {
                    finish(line, droppedPrefix: droppedPrefix)
                    line.removeAll(keepingCapacity: true)
                    atLineStart = true
                } else if atLineStart || line.count < 48 {
                    // Only a line's beginning says what it is.
                    line.append(byte)
                    atLineStart = false
                }
            }
        }
        Glibc.close(fd)
    }

    private func finish(_ line: [UInt8], droppedPrefix: [UInt8]) {
        if line.starts(with: Array(#"{"address""#.utf8)) || line.starts(with: Array(">>> ".utf8)) {
            outcome.printed += 1
        } else if line.starts(with: droppedPrefix) {
            let digits = line.dropFirst(droppedPrefix.count).prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            outcome.dropped += Int(String(decoding: digits, as: UTF8.self)) ?? 0
        }
    }
}

/// A tool run as a child process: stdout into a pipe, stderr into a temporary file.
struct ToolChild {
    let pid: pid_t
    let output: Int32
    private let errorPath: String

    init(_ arguments: [String]) throws {
        guard let pipe = Posix.makePipe() else { throw BenchError("pipe failed") }
        errorPath = "/tmp/bareble-bench-tool-\(getpid())-\(pipe.read).err"
        let errorFile = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            Glibc.close(pipe.write)
            if errorFile >= 0 { Glibc.close(errorFile) }
        }
        guard errorFile >= 0 else {
            Glibc.close(pipe.read)
            throw BenchError("cannot create \(errorPath): \(String(cString: strerror(errno)))")
        }
        do {
            pid = try ChildProcess.spawn(arguments, stdout: pipe.write, stderr: errorFile)
        } catch {
            Glibc.close(pipe.read)
            throw BenchError(error.description)
        }
        output = pipe.read
    }

    func interrupt() { kill(pid, SIGINT) }

    /// The exit status, the CPU time the child used (user plus system) and its peak RSS.
    func wait() -> (status: Int32, cpuSeconds: Double, maxRSSKiB: Int) {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), cpu, usage.ru_maxrss)
    }

    /// What the child wrote to stderr (its last few lines), then the file is removed.
    func errors() -> String {
        defer { unlink(errorPath) }
        guard let file = fopen(errorPath, "r") else { return "" }
        defer { fclose(file) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            lines.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return lines.suffix(3).joined().split(separator: "\n").joined(separator: " | ")
    }
}
