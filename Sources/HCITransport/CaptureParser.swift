import BluetoothCore

/// One record of a capture, whatever its file format, in the monitor channel's terms: the
/// adapter, what the record is (a command, an event, ACL either way, an index or system
/// note, ...) and its payload (an HCI packet without its H4 indicator for the packet kinds).
public struct CaptureRecord: Sendable, Hashable {
    /// 1-based position in the capture.
    public var number: Int
    public var index: UInt16
    public var opcode: MonitorRecord.Opcode
    /// Microseconds since the Unix epoch (UTC).
    public var timestamp: Int64
    public var payload: [UInt8]
    /// The packet's length before the capture cut it (at least `payload.count`).
    public var originalLength: Int

    public init(number: Int, index: UInt16, opcode: MonitorRecord.Opcode, timestamp: Int64, payload: [UInt8], originalLength: Int? = nil) {
        self.number = number
        self.index = index
        self.opcode = opcode
        self.timestamp = timestamp
        self.payload = payload
        self.originalLength = originalLength ?? payload.count
    }
}

/// A streaming reader of Bluetooth captures: btsnoop (datalinks 1001 unencapsulated HCI,
/// 1002 H4, 2001 Linux monitor), pcap and pcapng (linktypes 201 H4 with a direction
/// pseudo-header and 254 Linux monitor). Bytes are fed as they arrive (a file, a pipe);
/// each whole record is handed on at once, so memory is one record plus one read, never
/// the file. Total: any input gives records or a ``CaptureError``.
public struct CaptureParser: Sendable {
    /// What a record may hold at most: an HCI packet is at most 4 + 65,535 bytes, so more
    /// means a damaged file, not a packet, and must not make us allocate it.
    public static let maximumRecordLength = 70_000

    public enum Format: Sendable, Hashable, CustomStringConvertible {
        case btsnoop(datalink: UInt32)
        case pcap(linktype: UInt32)
        case pcapng

        public var description: String {
            switch self {
            case let .btsnoop(datalink): "btsnoop (datalink \(datalink))"
            case let .pcap(linktype): "pcap (linktype \(linktype))"
            case .pcapng: "pcapng"
            }
        }
    }

    /// The format, once the file header has been read.
    public private(set) var format: Format?
    private var buffer: [UInt8] = []
    private var offset = 0
    private var number = 0
    /// Bytes consumed before `buffer[0]`, for error positions.
    private var consumed = 0
    // pcap: byte order and timestamp unit.
    private var littleEndian = false
    private var nanoseconds = false
    // pcapng: each interface's linktype and timestamp unit (divisor to microseconds, or
    // multiplier when negative).
    private var interfaces: [(linktype: UInt32, perMicrosecond: Double)] = []

    public init() {}

    /// Parses what `bytes` completes, handing each whole record to `record`.
    public mutating func feed(_ bytes: some Collection<UInt8>, record: (CaptureRecord) throws -> Void) throws {
        if offset > 0 && offset >= buffer.count / 2 {
            consumed += offset
            buffer.removeSubrange(0..<offset)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
        while let next = try next() { try record(next) }
    }

    /// The input ended: an error when it ended inside a header or a record.
    public func finish() throws(CaptureError) {
        if format == nil { throw buffer.isEmpty ? .empty : .unknownFormat(Array(buffer.prefix(8))) }
        if offset < buffer.count { throw .truncated(record: number + 1, offset: consumed + offset) }
    }

    private var available: Int { buffer.count - offset }

    private func u16(_ at: Int, little: Bool) -> UInt32 {
        let (a, b) = (UInt32(buffer[offset + at]), UInt32(buffer[offset + at + 1]))
        return little ? a | b << 8 : a << 8 | b
    }

    private func u32(_ at: Int, little: Bool) -> UInt32 {
        little ? u16(at, little: true) | u16(at + 2, little: true) << 16 : u16(at, little: false) << 16 | u16(at + 2, little: false)
    }

    private mutating func next() throws(CaptureError) -> CaptureRecord? {
        if format == nil, try !readFileHeader() { return nil }
        switch format {
        case let .btsnoop(datalink): return try nextBTSnoop(datalink)
        case let .pcap(linktype): return try nextPCAP(linktype)
        case .pcapng: return try nextPCAPNG()
        case nil: return nil
        }
    }

    private mutating func readFileHeader() throws(CaptureError) -> Bool {
        guard available >= 4 else { return false }
        let magic = u32(0, little: false)
        switch magic {
        case 0x6274_736E: // "btsn"
            guard available >= BTSnoop.fileHeaderLength else { return false }
            guard Array(buffer[offset..<offset + 8]) == BTSnoop.magic else { throw .unknownFormat(Array(buffer[offset..<offset + 8])) }
            let version = u32(8, little: false)
            guard version == BTSnoop.version else { throw .unsupportedVersion(version) }
            let datalink = u32(12, little: false)
            guard [1001, 1002, 2001].contains(datalink) else { throw .unsupportedLink(Format.btsnoop(datalink: datalink).description) }
            format = .btsnoop(datalink: datalink)
            offset += BTSnoop.fileHeaderLength
        case 0xA1B2_C3D4, 0xD4C3_B2A1, 0xA1B2_3C4D, 0x4D3C_B2A1:
            guard available >= 24 else { return false }
            littleEndian = magic == 0xD4C3_B2A1 || magic == 0x4D3C_B2A1
            nanoseconds = magic == 0xA1B2_3C4D || magic == 0x4D3C_B2A1
            let linktype = u32(20, little: littleEndian) & 0x0FFF_FFFF
            guard linktype == 201 || linktype == 254 else { throw .unsupportedLink(Format.pcap(linktype: linktype).description) }
            format = .pcap(linktype: linktype)
            offset += 24
        case 0x0A0D_0D0A:
            format = .pcapng
        default:
            throw .unknownFormat(Array(buffer[offset..<offset + 4]))
        }
        return true
    }

    private func checkLength(_ length: Int) throws(CaptureError) {
        guard length <= Self.maximumRecordLength else {
            throw .recordTooLong(record: number + 1, offset: consumed + offset, length: length)
        }
    }

    private mutating func nextBTSnoop(_ datalink: UInt32) throws(CaptureError) -> CaptureRecord? {
        guard available >= BTSnoop.recordHeaderLength else { return nil }
        let original = Int(u32(0, little: false)), included = Int(u32(4, little: false))
        let flags = u32(8, little: false)
        try checkLength(included)
        guard included <= original else { throw .inconsistent(record: number + 1, included: included, original: original) }
        guard available >= BTSnoop.recordHeaderLength + included else { return nil }
        let timestamp = Int64(bitPattern: UInt64(u32(16, little: false)) << 32 | UInt64(u32(20, little: false))) &- BTSnoop.epochOffset
        let start = offset + BTSnoop.recordHeaderLength
        var payload = Array(buffer[start..<start + included])
        offset = start + included
        number += 1
        let received = flags & 1 == 1
        var index: UInt16 = 0, opcode: MonitorRecord.Opcode
        switch datalink {
        case 1001:
            opcode = flags & 2 != 0 ? (received ? .eventPacket : .commandPacket) : (received ? .aclReceive : .aclTransmit)
        case 2001:
            index = UInt16(truncatingIfNeeded: flags >> 16)
            opcode = MonitorRecord.Opcode(rawValue: UInt16(truncatingIfNeeded: flags))
        default:
            (opcode, payload) = Self.h4(payload, received: received)
        }
        return CaptureRecord(number: number, index: index, opcode: opcode, timestamp: timestamp, payload: payload, originalLength: original)
    }

    private mutating func nextPCAP(_ linktype: UInt32) throws(CaptureError) -> CaptureRecord? {
        guard available >= 16 else { return nil }
        let seconds = Int64(u32(0, little: littleEndian)), fraction = Int64(u32(4, little: littleEndian))
        let included = Int(u32(8, little: littleEndian)), original = Int(u32(12, little: littleEndian))
        try checkLength(included)
        guard available >= 16 + included else { return nil }
        let start = offset + 16
        let data = Array(buffer[start..<start + included])
        offset = start + included
        number += 1
        let timestamp = seconds * 1_000_000 + (nanoseconds ? fraction / 1000 : fraction)
        return try Self.linkRecord(data, linktype: linktype, number: number, timestamp: timestamp, original: original)
    }

    private mutating func nextPCAPNG() throws(CaptureError) -> CaptureRecord? {
        while true {
            guard available >= 12 else { return nil }
            if u32(0, little: false) == 0x0A0D_0D0A {
                // Section Header: its byte-order magic decides how the section reads.
                let order = u32(8, little: true)
                guard order == 0x1A2B_3C4D || order == 0x4D3C_2B1A else { throw .unknownFormat(Array(buffer[offset + 8..<offset + 12])) }
                littleEndian = order == 0x1A2B_3C4D
                interfaces = []
            }
            let type = u32(0, little: littleEndian), length = Int(u32(4, little: littleEndian))
            guard length >= 12, length % 4 == 0 else { throw .inconsistent(record: number + 1, included: length, original: 12) }
            try checkLength(length - 12)
            guard available >= length else { return nil }
            let body = offset + 8
            defer { offset += length }
            switch type {
            case 1: // Interface Description
                guard length >= 20 else { throw .inconsistent(record: number + 1, included: length, original: 20) }
                let linktype = u16(8, little: littleEndian)
                interfaces.append((linktype, Self.timestampResolution(buffer[(offset + 16)..<(offset + length - 4)], little: littleEndian)))
            case 6: // Enhanced Packet
                guard length >= 32 else { throw .inconsistent(record: number + 1, included: length, original: 32) }
                let interface = Int(u32(8, little: littleEndian))
                guard interface < interfaces.count else { throw .unsupportedLink("pcapng packet on undeclared interface \(interface)") }
                let ticks = UInt64(u32(12, little: littleEndian)) << 32 | UInt64(u32(16, little: littleEndian))
                let included = Int(u32(20, little: littleEndian)), original = Int(u32(24, little: littleEndian))
                guard included <= length - 32 else { throw .inconsistent(record: number + 1, included: included, original: length - 32) }
                let data = Array(buffer[(body + 20)..<(body + 20 + included)])
                number += 1
                let (linktype, perMicrosecond) = interfaces[interface]
                guard linktype == 201 || linktype == 254 else { throw .unsupportedLink(Format.pcap(linktype: linktype).description) }
                // Ticks at a coarse resolution, or high words near 2^32, reach past Int64.
                guard let timestamp = Int64(exactly: (Double(ticks) / perMicrosecond).rounded(.towardZero)) else { throw .timestampOutOfRange(record: number) }
                return try Self.linkRecord(data, linktype: linktype, number: number, timestamp: timestamp, original: original)
            default: continue // Section Header, statistics, name resolution, custom: nothing to decode
            }
        }
    }

    /// if_tsresol (option 9): ticks per microsecond; microseconds when absent.
    private static func timestampResolution(_ options: ArraySlice<UInt8>, little: Bool) -> Double {
        var at = options.startIndex
        while at + 4 <= options.endIndex {
            let code = little ? Int(options[at]) | Int(options[at + 1]) << 8 : Int(options[at]) << 8 | Int(options[at + 1])
            let length = little ? Int(options[at + 2]) | Int(options[at + 3]) << 8 : Int(options[at + 2]) << 8 | Int(options[at + 3])
            if code == 0 { break }
            if code == 9, length >= 1, at + 4 < options.endIndex {
                let value = options[at + 4]
                let exponent = Double(value & 0x7F)
                let perSecond = value & 0x80 != 0 ? pow2(exponent) : pow10(exponent)
                return perSecond / 1_000_000
            }
            at += 4 + (length + 3) / 4 * 4
        }
        return 1
    }

    private static func pow10(_ exponent: Double) -> Double { exponent <= 0 ? 1 : 10 * pow10(exponent - 1) }
    private static func pow2(_ exponent: Double) -> Double { exponent <= 0 ? 1 : 2 * pow2(exponent - 1) }

    /// A pcap/pcapng packet of linktype 201 (4-byte big-endian direction, then H4) or 254
    /// (adapter and opcode, big-endian, then the payload).
    private static func linkRecord(_ data: [UInt8], linktype: UInt32, number: Int, timestamp: Int64, original: Int) throws(CaptureError) -> CaptureRecord {
        guard data.count >= 4 else { throw .truncated(record: number, offset: 0) }
        if linktype == 254 {
            let index = UInt16(data[0]) << 8 | UInt16(data[1])
            let opcode = MonitorRecord.Opcode(rawValue: UInt16(data[2]) << 8 | UInt16(data[3]))
            return CaptureRecord(number: number, index: index, opcode: opcode, timestamp: timestamp, payload: Array(data[4...]), originalLength: original - 4)
        }
        let (opcode, payload) = h4(Array(data[4...]), received: data[3] & 1 == 1)
        return CaptureRecord(number: number, index: 0, opcode: opcode, timestamp: timestamp, payload: payload, originalLength: original - 4)
    }

    /// An H4 frame: its indicator says the packet type; a frame without a known one stays
    /// whole, as a vendor diagnostic record the decoder shows in hex.
    private static func h4(_ frame: [UInt8], received: Bool) -> (MonitorRecord.Opcode, [UInt8]) {
        guard let first = frame.first, let type = HCIPacketType(rawValue: first) else { return (.vendorDiagnostic, frame) }
        let opcode: MonitorRecord.Opcode = switch type {
        case .command: .commandPacket
        case .event: .eventPacket
        case .acl: received ? .aclReceive : .aclTransmit
        case .sco: received ? .scoReceive : .scoTransmit
        case .iso: received ? .isoReceive : .isoTransmit
        }
        return (opcode, Array(frame.dropFirst()))
    }
}

public enum CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case unknownFormat([UInt8])
    case unsupportedVersion(UInt32)
    case unsupportedLink(String)
    case truncated(record: Int, offset: Int)
    case inconsistent(record: Int, included: Int, original: Int)
    case recordTooLong(record: Int, offset: Int, length: Int)
    /// A pcapng packet's time, in its interface's resolution, is beyond what a 64-bit
    /// count of microseconds holds (some 292,000 years).
    case timestampOutOfRange(record: Int)

    public var description: String {
        switch self {
        case .empty: "the capture is empty"
        case let .unknownFormat(bytes): "not a btsnoop, pcap or pcapng capture (it starts \(Hex.string(bytes)))"
        case let .unsupportedVersion(version): "btsnoop version \(version) is not supported (only 1)"
        case let .unsupportedLink(what): "\(what) is not a Bluetooth HCI link: btsnoop 1001/1002/2001 and pcap linktypes 201/254 are read"
        case let .truncated(record, offset): "record \(record) at byte \(offset) is cut short: the capture ends mid-record"
        case let .inconsistent(record, included, original): "record \(record) claims \(included) bytes where at most \(original) fit: the file is damaged"
        case let .recordTooLong(record, offset, length): "record \(record) at byte \(offset) claims \(length) bytes, more than any HCI packet: the file is damaged"
        case let .timestampOutOfRange(record): "record \(record)'s time is beyond any clock (its interface's resolution and ticks do not fit 64-bit microseconds): the file is damaged"
        }
    }
}
