import Glibc
import Testing
@testable import HCITransport
import TestSupport

@Suite struct BTSnoopTests {
    /// Reset, its Command Complete, an LE Advertising Report, an ACL packet.
    static let exchange: [(HCIPacket, PacketDirection)] = [
        (Samples.reset, .hostToController),
        (Samples.resetComplete, .controllerToHost),
        (Samples.advertisingReport, .controllerToHost),
        (Samples.acl, .hostToController),
    ]

    @Test func writeThenReadBack() throws {
        let path = temporaryPath("roundtrip.btsnoop")
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path)
        var written: [BTSnoop.Record] = []
        for (index, (packet, direction)) in Self.exchange.enumerated() {
            let record = BTSnoop.Record(packet: packet, direction: direction, timestamp: BTSnoop.now() + Int64(index))
            try writer.write(record)
            written.append(record)
        }
        writer.close()
        let file = try BTSnoopFile(contentsOf: path)
        #expect(file.datalink == .h4)
        #expect(file.records == written)
        #expect(file.records.map(\.flags) == [2, 3, 3, 0])
        #expect(file.records.compactMap(\.packet) == Self.exchange.map(\.0))
        #expect(file.records.map(\.direction) == Self.exchange.map(\.1))
        // Timestamps are microseconds since year 0: now is past 2020-01-01.
        let year2020: Int64 = BTSnoop.epochOffset + 1_577_836_800 * 1_000_000
        #expect(file.records[0].timestamp > year2020)
    }

    @Test func readerErrors() throws {
        let header = BTSnoop.encodeHeader(.h4)
        #expect(throws: BTSnoopError.badMagic) { try BTSnoopFile(parsing: Array("notsnoop".utf8) + [0, 0, 0, 1, 0, 0, 3, 0xEA]) }
        #expect(throws: BTSnoopError.badMagic) { try BTSnoopFile(parsing: []) }
        var badVersion = header
        badVersion[11] = 2
        #expect(throws: BTSnoopError.unsupportedVersion(2)) { try BTSnoopFile(parsing: badVersion) }
        var badLink = header
        badLink[15] = 0
        #expect(throws: BTSnoopError.unsupportedDatalink(768)) { try BTSnoopFile(parsing: badLink) }
        let record = BTSnoop.encode(BTSnoop.Record(packet: Samples.reset, direction: .hostToController, timestamp: 1))
        #expect(try BTSnoopFile(parsing: header + record).records.count == 1)
        for cut in 1..<record.count {
            #expect(throws: BTSnoopError.truncatedRecord(index: 1, offset: 16 + record.count)) {
                try BTSnoopFile(parsing: header + record + record.prefix(cut))
            }
        }
        var inconsistent = record
        inconsistent[3] = 1  // original length 1 < included 4
        #expect(throws: BTSnoopError.inconsistentRecord(index: 0, included: 4, original: 1)) {
            try BTSnoopFile(parsing: header + inconsistent)
        }
        // A huge included length must not allocate: it is checked against the input first.
        var huge = record
        huge[0] = 0xFF; huge[4] = 0xFF
        #expect(throws: BTSnoopError.truncatedRecord(index: 0, offset: 16)) { try BTSnoopFile(parsing: header + huge) }
    }

    @Test func monitorDatalinkFlags() throws {
        let path = temporaryPath("monitor.btsnoop")
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path, datalink: .linuxMonitor)
        try writer.write(MonitorRecord(opcode: .eventPacket, index: 1, payload: Samples.resetComplete.bytes))
        writer.close()
        let file = try BTSnoopFile(contentsOf: path)
        #expect(file.datalink == .linuxMonitor)
        #expect(file.records.first?.flags == 0x0001_0003)
        #expect(file.records.first?.data == Samples.resetComplete.bytes)
    }

    /// Wireshark decodes the capture of correct traffic with no malformed packet.
    @Test func tsharkDecodesWithoutMalformedPackets() throws {
        let path = temporaryPath("tshark.btsnoop")
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path)
        for (packet, direction) in Self.exchange { try writer.write(packet, direction: direction) }
        writer.close()
        let malformed = shell("tshark -r \(path) -Y _ws.malformed 2>/dev/null")
        #expect(malformed.status == 0, "tshark must be installed: \(malformed.output)")
        #expect(malformed.output.isEmpty, "\(malformed.output)")
        let decoded = shell("tshark -r \(path) 2>/dev/null")
        #expect(decoded.status == 0, "\(decoded.output)")
        let lines = decoded.output.split(separator: "\n")
        #expect(lines.count == Self.exchange.count, "\(decoded.output)")
        #expect(decoded.output.contains("Reset"), "\(decoded.output)")
        #expect(decoded.output.contains("Command Complete"), "\(decoded.output)")
        #expect(decoded.output.contains("Advertising Report"), "\(decoded.output)")
    }

    @Test func capturingTransportRecordsBothWays() throws {
        let listener = try FakeControllerListener()
        let path = temporaryPath("capture.btsnoop")
        defer { unlink(path) }
        let transport = CapturingTransport(
            try TCPTransport.connect(host: "127.0.0.1", port: listener.port), writer: try BTSnoopWriter(path: path))
        let controller = listener.accept()
        defer { close(controller) }
        let received = Inbox<HCIPacket>()
        try transport.start(receive: { received.put($0) }, closed: { _ in })
        try transport.send(Samples.reset)
        #expect(readExactly(controller, 4) == Samples.reset.h4Bytes)
        writeAll(controller, stream([Samples.resetComplete, Samples.advertisingReport]))
        #expect(received.wait(for: 2).count == 2)
        transport.close()
        let file = try BTSnoopFile(contentsOf: path)
        #expect(file.records.compactMap(\.packet) == [Samples.reset, Samples.resetComplete, Samples.advertisingReport])
        #expect(file.records.map(\.direction) == [.hostToController, .controllerToHost, .controllerToHost])
    }
}
