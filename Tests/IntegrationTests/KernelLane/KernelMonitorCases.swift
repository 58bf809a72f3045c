import ATT
import BluetoothCore
import Foundation
import GATT
import HCI
import HCITransport
import L2CAP
import Synchronization
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
        let seen = Mutex<[MonitorRecord.Opcode: Int]>([:])
        let notes = Mutex<[String]>([])
        let indexes = Mutex<[String]>([])
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
