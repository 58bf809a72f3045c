import HCITransport
import Testing

/// The streaming capture reader: every format it claims, fed whole and a byte at a time.
@Suite struct CaptureParserTests {
    static func records(_ bytes: [UInt8], chunk: Int = .max) throws -> [CaptureRecord] {
        var parser = CaptureParser()
        var records: [CaptureRecord] = []
        var at = 0
        while at < bytes.count {
            let end = min(bytes.count, at + chunk)
            try parser.feed(bytes[at..<end]) { records.append($0) }
            at = end
        }
        try parser.finish()
        return records
    }

    static func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func le32(_ value: UInt32) -> [UInt8] { be32(value).reversed() }
    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    static let reset: [UInt8] = [0x03, 0x0C, 0x00]
    static let resetComplete: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

    static func btsnoop(_ datalink: UInt32, _ records: [(flags: UInt32, data: [UInt8])]) -> [UInt8] {
        var bytes = BTSnoop.magic + be32(1) + be32(datalink)
        for (number, record) in records.enumerated() {
            let time = UInt64(BTSnoop.epochOffset) + 1_000_000 * UInt64(number + 1)
            bytes += be32(UInt32(record.data.count)) + be32(UInt32(record.data.count)) + be32(record.flags) + be32(0)
            bytes += be32(UInt32(time >> 32)) + be32(UInt32(time & 0xFFFF_FFFF)) + record.data
        }
        return bytes
    }

    @Test(arguments: [1, 7, Int.max])
    func btsnoopH4(chunk: Int) throws {
        let file = Self.btsnoop(1002, [(2, [0x01] + Self.reset), (3, [0x04] + Self.resetComplete), (1, [0x02, 0x40, 0x20, 0x00, 0x00])])
        let records = try Self.records(file, chunk: chunk)
        #expect(records.map(\.opcode) == [.commandPacket, .eventPacket, .aclReceive])
        #expect(records.map(\.payload) == [Self.reset, Self.resetComplete, [0x40, 0x20, 0x00, 0x00]])
        #expect(records.map(\.timestamp) == [1_000_000, 2_000_000, 3_000_000])
        #expect(records.map(\.number) == [1, 2, 3])
    }

    @Test func btsnoopUnencapsulatedAndMonitor() throws {
        let h1 = try Self.records(Self.btsnoop(1001, [(2, Self.reset), (3, Self.resetComplete), (0, [0x40, 0x20, 0, 0])]))
        #expect(h1.map(\.opcode) == [.commandPacket, .eventPacket, .aclTransmit])
        let monitor = try Self.records(Self.btsnoop(2001, [(1 << 16 | 2, Self.reset), (1 << 16 | 3, Self.resetComplete)]))
        #expect(monitor.map(\.index) == [1, 1] && monitor.map(\.opcode) == [.commandPacket, .eventPacket])
    }

    @Test func pcapAndPcapng() throws {
        // pcap, little-endian, linktype 201: direction pseudo-header then H4.
        var pcap = Self.le32(0xA1B2_C3D4) + Self.le16(2) + Self.le16(4) + Self.le32(0) + Self.le32(0) + Self.le32(65535) + Self.le32(201)
        let frame = Self.be32(1) + [0x04] + Self.resetComplete
        pcap += Self.le32(10) + Self.le32(5) + Self.le32(UInt32(frame.count)) + Self.le32(UInt32(frame.count)) + frame
        let fromPCAP = try Self.records(pcap, chunk: 5)
        #expect(fromPCAP.map(\.opcode) == [.eventPacket] && fromPCAP.first?.payload == Self.resetComplete)
        #expect(fromPCAP.first?.timestamp == 10_000_005)

        // pcapng: Section Header, Interface Description (linktype 254), Enhanced Packet.
        let section = Self.le32(0x0A0D_0D0A) + Self.le32(28) + Self.le32(0x1A2B_3C4D) + Self.le16(1) + Self.le16(0) + [UInt8](repeating: 0xFF, count: 8) + Self.le32(28)
        let interface = Self.le32(1) + Self.le32(20) + Self.le16(254) + Self.le16(0) + Self.le32(0) + Self.le32(20)
        let data = [0, 2, 0, 2] + Self.reset // adapter 2, opcode 2 (command), big-endian
        let padded = data + [UInt8](repeating: 0, count: (4 - data.count % 4) % 4)
        let packet = Self.le32(6) + Self.le32(UInt32(32 + padded.count)) + Self.le32(0) + Self.le32(0) + Self.le32(7)
            + Self.le32(UInt32(data.count)) + Self.le32(UInt32(data.count)) + padded + Self.le32(UInt32(32 + padded.count))
        let fromPCAPNG = try Self.records(section + interface + packet, chunk: 3)
        #expect(fromPCAPNG.map(\.index) == [2] && fromPCAPNG.map(\.opcode) == [.commandPacket] && fromPCAPNG.first?.payload == Self.reset)
        #expect(fromPCAPNG.first?.timestamp == 7)
    }

    @Test func aPCAPNGTimeNoClockCanHoldIsATypedErrorNotATrap() throws {
        let section = Self.le32(0x0A0D_0D0A) + Self.le32(28) + Self.le32(0x1A2B_3C4D) + Self.le16(1) + Self.le16(0) + [UInt8](repeating: 0xFF, count: 8) + Self.le32(28)
        // if_tsresol 0: one tick a second, so 2^44 ticks are more microseconds than Int64 holds.
        let coarse = Self.le32(1) + Self.le32(28) + Self.le16(254) + Self.le16(0) + Self.le32(0) + Self.le16(9) + Self.le16(1) + [0, 0, 0, 0] + Self.le32(28)
        let data = [0, 2, 0, 2] + Self.reset
        let padded = data + [UInt8](repeating: 0, count: (4 - data.count % 4) % 4)
        func packet(high: UInt32) -> [UInt8] {
            Self.le32(6) + Self.le32(UInt32(32 + padded.count)) + Self.le32(0) + Self.le32(high) + Self.le32(7)
                + Self.le32(UInt32(data.count)) + Self.le32(UInt32(data.count)) + padded + Self.le32(UInt32(32 + padded.count))
        }
        let interface = Self.le32(1) + Self.le32(20) + Self.le16(254) + Self.le16(0) + Self.le32(0) + Self.le32(20)
        #expect(throws: CaptureError.timestampOutOfRange(record: 1)) { try Self.records(section + interface + packet(high: 0x8000_0000)) }
        #expect(throws: CaptureError.timestampOutOfRange(record: 1)) { try Self.records(section + coarse + packet(high: 0x1000)) }
    }

    @Test func damagedCapturesAreTypedErrors() throws {
        let good = Self.btsnoop(1002, [(2, [0x01] + Self.reset)])
        #expect(throws: CaptureError.truncated(record: 1, offset: 16)) { try Self.records(Array(good.dropLast())) }
        #expect(throws: CaptureError.empty) { try Self.records([]) }
        #expect(throws: CaptureError.unknownFormat([0x50, 0x4B, 0x03, 0x04])) { try Self.records([0x50, 0x4B, 0x03, 0x04, 0, 0]) }
        #expect(throws: CaptureError.unsupportedLink("btsnoop (datalink 1003)")) { try Self.records(Self.btsnoop(1003, [])) }
        // A record claiming 4 GB is refused before anything is allocated for it.
        var lying = Self.btsnoop(1002, [])
        lying += Self.be32(0xFFFF_FFFF) + Self.be32(0xFFFF_FFF0) + [UInt8](repeating: 0, count: 16)
        #expect(throws: CaptureError.recordTooLong(record: 1, offset: 16, length: 0xFFFF_FFF0)) { try Self.records(lying) }
    }
}
