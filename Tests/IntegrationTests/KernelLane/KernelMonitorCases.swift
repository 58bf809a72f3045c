import ATT
import BluetoothCore
import Foundation
import Glibc
import GATT
import HCI
import HCITransport
import KernelHost
import L2CAP
import Testing
import TestSupport

/// hci-monitor in the lane's guest: the monitor channel's records decoded and written to a
/// btsnoop (datalink 2001) in the job folder while an ATT exchange runs over the kernel's
/// L2CAP socket; on the host, tshark decodes the file with no malformed packet and finds
/// the ATT exchange.
enum KernelMonitorCases {
    static let captureName = "monitor.btsnoop"

    static func recordsBTSnoop() async throws {
        try Adapters.bringUp(index: 0)
        let path = KernelGuest.jobDirectory + "/" + captureName
        let writer = try BTSnoopWriter(path: path, datalink: .linuxMonitor)
        let monitor = try HCIMonitor.open()
        let seen = Lock<[MonitorRecord.Opcode: Int]>([:])
        let notes = Lock<[String]>([])
        let indexes = Lock<[String]>([])
        try monitor.start(receive: { record in
            try? writer.write(record)
            seen.withLock { $0[record.opcode, default: 0] += 1 }
            if let note = record.note { notes.withLock { $0.append(note) } }
            if let index = record.newIndex { indexes.withLock { $0.append("\(record.index) \(index.name) \(index.address)") } }
        }, closed: { _ in })

        let socket = try await KernelL2CAPSocket.connect(to: KernelGuest.peripheral, adapter: 0, timeout: .seconds(30))
        let att = ATTClient(bearer: KernelSocketBearer(socket: socket))
        let gatt = GATTClient(att: att)
        let value = try await gatt.readValue(3)  // the Device Name
        try #require(value == Array("BareBLE-HRM".utf8))
        att.close()
        // The link ends ~2 s after the last socket closes: record the disconnection too.
        try await Task.sleep(for: .seconds(4))
        monitor.close()
        writer.close()

        let counts = seen.withLock { $0 }
        let newIndexes = Set(indexes.withLock { $0 })
        try #require(newIndexes.isSuperset(of: ["0 hci0 \(KernelGuest.hci0Address)", "1 hci1 \(KernelGuest.hci1Address)"]), "New Index records: \(newIndexes)")
        try #require(notes.withLock { $0 }.contains { $0.hasPrefix("Linux version") }, "system notes: \(notes.withLock { $0 })")
        for opcode in [MonitorRecord.Opcode.commandPacket, .eventPacket, .aclTransmit, .aclReceive] {
            try #require((counts[opcode] ?? 0) > 0, "no \(opcode) records: \(counts)")
        }
    }

    /// `bareble-trace live --json` beside `bareble-central explore` over hci-raw:0: the
    /// explore's ATT requests appear with their answers joined, on hci0's index.
    static func traceLive() async throws {
        try Adapters.bringUp(index: 0)
        let trace = try KernelAdapterCases.startTool(["live", "--json", "--index", "0", "--protocol", "att", "--duration", "120"],
                                                     executable: builtExecutable(named: "bareble-trace"))
        var finished = false
        defer { if !finished { kill(trace.pid, SIGKILL); _ = trace.finishBlocking() } }
        // The monitor is open once the tool prints nothing and runs: give it the moment
        // its socket takes, then explore.
        try await Task.sleep(for: .seconds(2))
        let explore = try await KernelAdapterCases.runTool(["explore", KernelToolCases.address + "/random", "--json", "--transport", "hci-raw:0"])
        try #require(explore.status == 0, "explore over hci-raw:0: \(explore.errors)")
        // Ctrl-C, as a user ends it.
        kill(trace.pid, SIGINT)
        let run = try await trace.finish()
        finished = true
        try #require(run.status == 0, "bareble-trace live: \(run.errors)")
        let packets = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let requests = packets.filter { $0["attOpcode"] as? Int == 0x10 || $0["attOpcode"] as? Int == 0x08 }
        let answers = packets.filter { $0["answers"] != nil }
        try #require(requests.count >= 3 && answers.count >= requests.count, "\(requests.count) discovery requests, \(answers.count) answers:\n\(run.output.prefix(3000))")
        try #require(packets.allSatisfy { $0["index"] as? Int == 0 && $0["cid"] as? Int == 4 })
        print("kernel guest: bareble-trace live saw \(packets.count) ATT PDUs of the explore, \(answers.count) answers joined to their requests")
        try await traceLiveKernelTimes()
    }

    /// `bareble-trace live` stamps records with the kernel's time (SO_TIMESTAMPNS), not the
    /// time it read them: stopped (SIGSTOP) while `bareble-central hci 0x1009` runs over
    /// hci-raw:0, and resumed a second after, it reads the command and its Command Complete
    /// late; their times must still lie within the hci run, in order, and before the resume.
    /// Stamped when read, both would come after the resume.
    static func traceLiveKernelTimes() async throws {
        let trace = try KernelAdapterCases.startTool(["live", "--json", "--index", "0", "--duration", "120"],
                                                     executable: builtExecutable(named: "bareble-trace"), interactive: true)
        var finished = false
        defer { if !finished { kill(trace.pid, SIGCONT); kill(trace.pid, SIGKILL); _ = trace.finishBlocking() } }
        // The monitor replays a New Index for each controller once it is open.
        _ = try await trace.next("New Index of hci0") { $0["type"] as? String == "new-index" }
        kill(trace.pid, SIGSTOP)
        let before = Date()
        let hci = try await KernelAdapterCases.runTool(["hci", "0x1009", "--window", "0", "--transport", "hci-raw:0"])
        let after = Date()
        try #require(hci.status == 0, "hci 0x1009 over hci-raw:0: \(hci.errors)")
        try #require(hci.output.contains("\(KernelGuest.hci0Address)"), "hci 0x1009 printed no \(KernelGuest.hci0Address): \(hci.output)")
        // Past the resolution of any clock: a time taken at the read cannot pass for one
        // taken within the hci run.
        try await Task.sleep(for: .seconds(1))
        let resumed = Date()
        kill(trace.pid, SIGCONT)
        let command = try await trace.next("Read BD_ADDR sent") { $0["type"] as? String == "command" && $0["opcode"] as? Int == 0x1009 }
        let complete = try await trace.next("its Command Complete") { $0["event"] as? Int == 0x0E && $0["opcode"] as? Int == 0x1009 }
        kill(trace.pid, SIGINT)
        let run = try await trace.finish()
        finished = true
        try #require(run.status == 0, "bareble-trace live: \(run.errors)")
        let sent = try #require((command["time"] as? String).flatMap(isoSeconds), "\(command)")
        let answered = try #require((complete["time"] as? String).flatMap(isoSeconds), "\(complete)")
        // The kernel's clock and Date() are the same CLOCK_REALTIME; the slack covers the
        // microsecond rounding of the trace's times.
        let slack = 0.000_002
        try #require(before.timeIntervalSince1970 - slack <= sent && sent <= answered && answered <= after.timeIntervalSince1970 + slack,
                     "Read BD_ADDR at \(sent), Command Complete at \(answered), hci ran from \(before.timeIntervalSince1970) to \(after.timeIntervalSince1970)")
        try #require(answered < resumed.timeIntervalSince1970, "times taken at the read (resumed at \(resumed.timeIntervalSince1970))")
        print("kernel guest: bareble-trace live, stopped during `hci 0x1009`, stamped it \(Int((resumed.timeIntervalSince1970 - sent) * 1000)) ms before it could read it (kernel time), answer \(Int((answered - sent) * 1_000_000)) µs after")
    }

    /// Seconds since the Unix epoch of the trace's "2026-11-26T07:15:30.123456Z".
    static func isoSeconds(_ text: String) -> Double? {
        let parts = text.dropLast().split(separator: ".")
        guard text.hasSuffix("Z"), parts.count == 2, let fraction = Double("0." + parts[1]) else { return nil }
        let formatter = ISO8601DateFormatter()
        guard let whole = formatter.date(from: parts[0] + "Z") else { return nil }
        return whole.timeIntervalSince1970 + fraction
    }

    /// A controller that goes away: a third /dev/vhci opened here (the kernel makes hciN
    /// of it), then closed. The monitor shows New Index, then Delete Index, for that index.
    static func deleteIndex() async throws {
        let monitor = try HCIMonitor.open()
        let (created, creations) = AsyncStream.makeStream(of: MonitorRecord.self)
        let (deleted, deletions) = AsyncStream.makeStream(of: MonitorRecord.self)
        try monitor.start(receive: { record in
            if record.opcode == .newIndex { creations.yield(record) }
            if record.opcode == .deleteIndex { deletions.yield(record) }
        }, closed: { _ in
            creations.finish()
            deletions.finish()
        })
        defer { monitor.close() }
        let fd = open("/dev/vhci", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw KernelCaseFailure("cannot open /dev/vhci: errno \(errno)") }
        // Vendor packet 0xFF with opcode 0 (a primary controller): the kernel creates it
        // now and answers 0xFF, the opcode, the new index (little endian).
        let index: UInt16 = try await onOwnThread {
            guard write(fd, [0xFF, 0x00], 2) == 2 else { throw KernelCaseFailure("vhci create: errno \(errno)") }
            var reply = [UInt8](repeating: 0, count: 4)
            guard read(fd, &reply, 4) == 4, reply[0] == 0xFF else { throw KernelCaseFailure("vhci answered \(reply)") }
            return UInt16(reply[2]) | UInt16(reply[3]) << 8
        }
        // The monitor opens with a New Index for each controller already there.
        _ = try await firstElement(of: only(created, index), within: .seconds(10), waitingFor: "New Index for hci\(index)")
        let started = ContinuousClock.now
        // The kernel is still bringing the new controller up (nobody answers its Reset):
        // closing may wait for that to give up.
        _ = try await onOwnThread { close(fd) }
        _ = try await firstElement(of: only(deleted, index), within: .seconds(20), waitingFor: "Delete Index for hci\(index)")
        try #require(!(try Adapters.list()).contains { $0.index == Int(index) }, "hci\(index) is still listed")
        print("kernel guest: hci\(index): New Index, then Delete Index \(ContinuousClock.now - started) after closing its /dev/vhci")
    }

    /// The records of `stream` for controller `index`.
    static func only(_ stream: AsyncStream<MonitorRecord>, _ index: UInt16) -> AsyncStream<MonitorRecord> {
        AsyncStream { continuation in
            let task = Task {
                for await record in stream where record.index == index { continuation.yield(record) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// On the host: tshark reads the guest's capture, nothing malformed, ATT present.
    static func hostCheck(jobDirectory: String) async throws {
        let path = jobDirectory + "/" + captureName
        let report = try await Tshark.check(path)
        #expect(report.packets > 20, "tshark decoded \(report.packets) records")
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
        let decoded = try Tshark.verbose(path)
        #expect(decoded.contains("Bluetooth Attribute Protocol"), "no ATT in the capture")
        #expect(decoded.contains("Read Request"), "no ATT Read Request in the capture")
    }
}
