import ArgumentParser
import BluetoothCore
import Dispatch
import Glibc
import HCITransport

/// `bareble-bench trace`: decoding a large capture to one line per packet, `bareble-trace
/// read --json` against tshark on the same file in the same run, each writing into a pipe
/// this process drains: `tshark -T json` (JSON, as ours) and `tshark -T fields` with the
/// fields the agreement check compares (tshark's cheapest output). Both are measured on
/// the whole file and on its first half: a streaming decoder's peak RSS does not grow with
/// the file.
struct TraceBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "bareble-trace read --json, tshark -T json and tshark -T fields on one generated capture, output into a pipe."
    )

    @Option(help: "Packets in the generated capture.")
    var packets = 1_000_000

    @Option(help: "A command and its Command Complete once every this many cycles of the GATT mix (1: every cycle, where tshark's time grows with the square of the commands).")
    var commandEvery = 100

    @Flag(help: "Skip tshark.")
    var skipTshark = false

    struct Outcome {
        var lines = 0
        var seconds = 0.0
        var cpuSeconds = 0.0
        var maxRSSKiB = 0
        var status: Int32 = 0
    }

    func run() throws {
        let whole = "/tmp/bareble-bench-trace-\(getpid()).btsnoop"
        let half = "/tmp/bareble-bench-trace-\(getpid())-half.btsnoop"
        defer { unlink(whole); unlink(half) }
        try Self.writeCapture(whole, packets: packets, commandEvery: commandEvery)
        try Self.writeCapture(half, packets: packets / 2, commandEvery: commandEvery)
        print("capture: \(grouped(packets)) packets (a GATT session's mix: notifications, reads, writes, advertising reports, "
            + "completed packets; a command and its completion every \(commandEvery) cycles)")
        let trace = executableBeside("bareble-trace")
        let fields = ["-e", "frame.number", "-e", "hci_h4.direction", "-e", "hci_h4.type", "-e", "bthci_cmd.opcode", "-e", "bthci_evt.code",
                      "-e", "bthci_acl.chandle", "-e", "btl2cap.cid", "-e", "btatt.opcode", "-e", "btatt.handle", "-e", "btsmp.opcode"]
        for (label, path, count) in [("whole", whole, packets), ("half", half, packets / 2)] {
            let ours = try measure([trace, "read", path, "--json"])
            print(describe("bareble-trace read --json (\(label))", ours, count))
            guard !skipTshark else { continue }
            for (name, arguments) in [("tshark -T json", ["-T", "json"]), ("tshark -T fields", ["-T", "fields", "-E", "occurrence=f"] + fields)] {
                let theirs = try measure(["tshark", "-r", path] + arguments)
                print(describe("\(name) (\(label))", theirs, count))
                let speed: Double = rate(ours, count) / rate(theirs, count)
                let cpu: Double = theirs.cpuSeconds / max(ours.cpuSeconds, 1e-9)
                let memory: Double = Double(ours.maxRSSKiB) / Double(max(1, theirs.maxRSSKiB))
                print("  ratio to \(name) (\(label)): \(fixed(speed, 1))x its packets per second, \(fixed(cpu, 1))x less CPU, "
                    + "peak RSS \(fixed(memory, 2))x its")
            }
        }
    }

    private func rate(_ outcome: Outcome, _ count: Int) -> Double { Double(count) / outcome.seconds }

    private func describe(_ name: String, _ outcome: Outcome, _ count: Int) -> String {
        let perSecond: Double = rate(outcome, count)
        let cpu: Double = outcome.cpuSeconds * 1e6 / Double(count)
        let megabytes: Double = Double(outcome.maxRSSKiB) / 1024
        return "\(name): \(grouped(outcome.lines)) lines in \(fixed(outcome.seconds, 2)) s = \(grouped(Int(perSecond))) packets/s, "
            + "\(fixed(cpu, 2)) µs CPU per packet, peak RSS \(fixed(megabytes, 1)) MB, exit \(outcome.status)"
    }

    private func measure(_ arguments: [String]) throws -> Outcome {
        let start = MonotonicClock.nanoseconds()
        let child = try ToolChild(arguments)
        let size = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        var lines = 0
        while true {
            let count = read(child.output, buffer, size)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            for index in 0..<count where buffer[index] == UInt8(ascii: "\n") { lines += 1 }
        }
        Glibc.close(child.output)
        let (status, cpu, rss) = child.wait()
        _ = child.errors()
        return Outcome(lines: lines, seconds: Double(MonotonicClock.nanoseconds() - start) / 1e9, cpuSeconds: cpu, maxRSSKiB: rss, status: status)
    }

    private func executableBeside(_ name: String) -> String {
        let me = CommandLine.arguments[0]
        guard let slash = me.lastIndex(of: "/") else { return name }
        return String(me[...slash]) + name
    }

    /// A GATT session's traffic on connection 0x0040 of one adapter, repeated: a
    /// notification, a read and its response, a write and its response, an advertising
    /// report, Number Of Completed Packets; every `commandEvery` cycles a command and its
    /// completion.
    static func writeCapture(_ path: String, packets: Int, commandEvery: Int) throws {
        let writer = try BTSnoopWriter(path: path)
        defer { writer.close() }
        func acl(_ pdu: [UInt8]) -> [UInt8] {
            let frame = [UInt8(pdu.count), 0, 0x04, 0x00] + pdu
            return [0x40, 0x00, UInt8(frame.count), 0x00] + frame
        }
        let session: [(HCIPacketType, PacketDirection, [UInt8])] = [
            (.acl, .controllerToHost, acl([0x1B, 0x10, 0x00] + [UInt8](repeating: 0x42, count: 20))),
            (.acl, .hostToController, acl([0x0A, 0x12, 0x00])),
            (.acl, .controllerToHost, acl([0x0B] + [UInt8](repeating: 0x17, count: 16))),
            (.acl, .hostToController, acl([0x12, 0x13, 0x00, 0x01, 0x00])),
            (.acl, .controllerToHost, acl([0x13])),
            (.event, .controllerToHost, [0x3E, 0x1E, 0x02, 0x01, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x12,
                                         0x02, 0x01, 0x06, 0x0E, 0x09] + Array("BareBLE bench".utf8) + [0xC5]),
            (.event, .controllerToHost, [0x13, 0x05, 0x01, 0x40, 0x00, 0x02, 0x00]),
        ]
        let command: [(HCIPacketType, PacketDirection, [UInt8])] = [
            (.command, .hostToController, [0x0C, 0x20, 0x02, 0x01, 0x00]),
            (.event, .controllerToHost, [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]),
        ]
        var time = BTSnoop.now()
        var written = 0
        var cycle = 0
        while written < packets {
            let packetsOfCycle = cycle % max(1, commandEvery) == max(1, commandEvery) - 1 ? session + command : session
            for (type, direction, bytes) in packetsOfCycle where written < packets {
                time += 250
                var flags: UInt32 = direction == .controllerToHost ? 1 : 0
                if type == .command || type == .event { flags |= 2 }
                try writer.write(BTSnoop.Record(flags: flags, timestamp: time, data: [type.rawValue] + bytes))
                written += 1
            }
            cycle += 1
        }
    }
}
