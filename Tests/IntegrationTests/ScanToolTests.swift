import Foundation
import HCITransport
import Testing
import TestSupport

/// `bareble-central scan`, the built executable, against the virtual radio.
@Suite(.serialized) struct ScanTool {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral", "--advertiser"]) }

    func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test func activeScanAsJSONLinesForADuration() async throws {
        let harness = try Self.harness.get()
        let port = harness.radio.tcpPort
        // The process is driven on a thread of its own: blocking reads must not hold a
        // cooperative thread while other suites run.
        let (status, data) = try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CentralTool.executable)
            process.arguments = ["scan", "--transport", "tcp:127.0.0.1:\(port)", "--duration", "1", "--active", "--duplicates", "first"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.runWithSignalsUnblocked()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, data)
        }
        #expect(status == 0)
        // Not a terminal, so JSON lines; "first" shows each device once.
        let lines = try jsonLines(String(decoding: data, as: UTF8.self))
        let addresses = lines.compactMap { $0["address"] as? String }
        #expect(addresses.sorted() == ["C4:4B:4D:00:00:01", "C4:4B:4D:00:00:02"])
        let hrm = try #require(lines.first { $0["address"] as? String == "C4:4B:4D:00:00:01" })
        #expect(hrm["connectable"] as? Bool == true)
        #expect(hrm["scanResponse"] as? String == "020A0004160F1857")
        let beacon = try #require(lines.first { $0["address"] as? String == "C4:4B:4D:00:00:02" })
        #expect(beacon["connectable"] as? Bool == false)
        let manufacturer = try #require(beacon["manufacturer"] as? [String: Any])
        #expect(manufacturer["company"] as? Int == 0xFFFF)
        #expect(manufacturer["data"] as? String == "010203")
    }

    /// `--btsnoop` into a FIFO whose reader goes away (Wireshark closed): the capture ends
    /// with one warning and the scan runs to its end. Before, the next record's write
    /// raised SIGPIPE and the tool died (status 141), leaving the controller scanning.
    @Test func aCaptureFIFOWhoseReaderLeavesDoesNotEndTheScan() async throws {
        let harness = try Self.harness.get()
        let fifo = TestScratch.root + "/scan-left.fifo"
        unlink(fifo)
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let port = harness.radio.tcpPort
        let (exited, status, lines, errors) = try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CentralTool.executable)
            process.arguments = ["scan", "--transport", "tcp:127.0.0.1:\(port)", "--json", "--duplicates", "all", "--duration", "3", "--btsnoop", fifo]
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.runWithSignalsUnblocked()
            // The reader: takes the file header and the first records, then leaves.
            let reader = open(fifo, O_RDONLY | O_CLOEXEC)
            var header = [UInt8](repeating: 0, count: 16)
            _ = read(reader, &header, header.count)
            close(reader)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationReason == .exit, process.terminationStatus, String(decoding: data, as: UTF8.self), errorText)
        }
        #expect(exited && status == 0, "status \(status): \(errors)")
        #expect(try jsonLines(lines).count > 10)
        #expect(errors.components(separatedBy: "capture stopped").count == 2, "\(errors)")
    }

    /// How a test stops a scan once it printed its first line.
    enum Stop: Sendable {
        /// Ctrl-C; the rest of the output is read.
        case interrupt
        /// What `head -1` does once it has its line: the pipe's reader closes.
        case closeStdout
    }

    /// Runs `scan` with `arguments` (JSON into a pipe, captured into `capture`) until its
    /// first line, then stops it; returns how it ended and everything read of its output.
    func scanUntilFirstLine(_ arguments: [String], capture: String, stop: Stop) async throws -> (exited: Bool, status: Int32, printed: Data) {
        let port = try Self.harness.get().radio.tcpPort
        return try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CentralTool.executable)
            // --duration is only a watchdog here: the stop comes long before.
            process.arguments = ["scan", "--transport", "tcp:127.0.0.1:\(port)", "--json", "--duration", "20", "--btsnoop", capture] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.runWithSignalsUnblocked()
            // Wait for the first line: scanning is running.
            var received = Data()
            while !received.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                received.append(chunk)
            }
            switch stop {
            case .interrupt:
                process.interrupt()
                received.append(output.fileHandleForReading.readDataToEndOfFile())
            case .closeStdout:
                try output.fileHandleForReading.close()
            }
            process.waitUntilExit()
            return (process.terminationReason == .exit, process.terminationStatus, received)
        }
    }

    /// The scan enable commands in `capture`: the last one must disable scanning.
    func scanEnables(in capture: String) throws -> [HCIPacket] {
        let commands = try BTSnoopFile(contentsOf: capture).records.compactMap(\.packet).filter { $0.type == .command }
        return commands.filter { $0.bytes.starts(with: [0x42, 0x20]) || $0.bytes.starts(with: [0x0C, 0x20]) }
    }

    /// `scan --json | head -1`: once stdout's reader is gone the tool stops as on Ctrl-C,
    /// disabling scanning first. Before, the next line's write raised SIGPIPE and the tool
    /// died with the controller still scanning.
    @Test func aClosedStdoutStopsTheScanLikeCtrlC() async throws {
        let capture = TestScratch.root + "/scan-epipe.btsnoop"
        let run = try await scanUntilFirstLine(["--duplicates", "all"], capture: capture, stop: .closeStdout)
        #expect(run.exited && run.status == 0, "exited \(run.exited), status \(run.status)")
        let enables = try scanEnables(in: capture)
        #expect(enables.count == 2)
        #expect(enables.last?.bytes.dropFirst(3).first == 0)
    }

    @Test func ctrlCDisablesScanningAndExitsCleanly() async throws {
        let capture = TestScratch.root + "/scan-sigint.btsnoop"
        let run = try await scanUntilFirstLine(["--address", "C4:4B:4D:00:00:02"], capture: capture, stop: .interrupt)
        #expect(run.exited)
        #expect(run.status == 0)
        let lines = try jsonLines(String(decoding: run.printed, as: UTF8.self))
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0["address"] as? String == "C4:4B:4D:00:00:02" })
        // The last scan command the tool sent disabled scanning.
        let enables = try scanEnables(in: capture)
        #expect(enables.count == 2)
        #expect(enables.last?.bytes.dropFirst(3).first == 0)
        #expect(try await Tshark.check(capture).malformed.isEmpty)
    }
}
