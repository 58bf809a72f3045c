import BluetoothCore
import HCITransport

/// A short capture written packet by packet at chosen times, so every figure the trace's
/// summaries give (`bareble-trace stats`, `gatt`) can be worked out by hand. The same
/// script feeds the decoder directly (``captureRecords()``) or becomes a btsnoop file.
public struct TraceScript {
    public struct Entry {
        public var packet: HCIPacket
        public var direction: PacketDirection
        /// Microseconds since the Unix epoch.
        public var timestamp: Int64
    }

    public private(set) var entries: [Entry] = []
    /// The time the next packet is stamped with; ``at(_:)`` moves it.
    public var now: Int64 = 1_764_000_000_000_000
    public let start: Int64 = 1_764_000_000_000_000

    public init() {}

    /// Moves the clock to `offset` microseconds after the script's start.
    public mutating func at(_ offset: Int64) { now = start + offset }

    public mutating func add(_ packet: HCIPacket, _ direction: PacketDirection) {
        entries.append(Entry(packet: packet, direction: direction, timestamp: now))
    }

    public mutating func connected(_ handle: UInt16, peer: BluetoothAddress, random: Bool = true) {
        let address = peer.littleEndianBytes
        add(HCIPacket(.event, [0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, random ? 1 : 0] + address
            + [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]), .controllerToHost)
    }

    public mutating func disconnected(_ handle: UInt16, reason: UInt8 = 0x13) {
        add(HCIPacket(.event, [0x05, 4, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), reason]), .controllerToHost)
    }

    public mutating func encryptionChanged(_ handle: UInt16, status: UInt8 = 0x00, enabled: Bool = true) {
        add(HCIPacket(.event, [0x08, 4, status, UInt8(handle & 0xFF), UInt8(handle >> 8), enabled ? 1 : 0]), .controllerToHost)
    }

    /// One legacy report; `eventType` 0x04 is a scan response.
    public mutating func advertisingReport(_ address: BluetoothAddress, rssi: Int8, eventType: UInt8 = 0x00, data: [UInt8] = [0x02, 0x01, 0x06]) {
        add(HCIPacket(.event, [0x3E, UInt8(12 + data.count), 0x02, 1, eventType, 0x01] + address.littleEndianBytes
            + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]), .controllerToHost)
    }

    /// `pdu` on `channel` (4 ATT, 6 SMP) of `handle`, in one ACL packet.
    public mutating func l2cap(_ pdu: [UInt8], channel: UInt16 = 0x0004, handle: UInt16 = 0x0040, sent: Bool) {
        let frame = [UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + pdu
        let flags: UInt8 = sent ? 0x00 : 0x20
        add(HCIPacket(.acl, [UInt8(handle & 0xFF), UInt8(handle >> 8) | flags, UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)] + frame),
            sent ? .hostToController : .controllerToHost)
    }

    /// A request we send and the peer's answer `rtt` microseconds later; the clock ends at
    /// the answer.
    public mutating func exchange(_ request: [UInt8], _ answer: [UInt8], rtt: Int64 = 100, handle: UInt16 = 0x0040) {
        l2cap(request, handle: handle, sent: true)
        now += rtt
        l2cap(answer, handle: handle, sent: false)
    }

    /// The records as the capture reader gives them, numbered from 1.
    public func captureRecords() -> [CaptureRecord] {
        entries.enumerated().map { number, entry in
            let opcode: MonitorRecord.Opcode = switch (entry.packet.type, entry.direction) {
            case (.command, _): .commandPacket
            case (.event, _): .eventPacket
            case (.acl, .hostToController): .aclTransmit
            default: .aclReceive
            }
            return CaptureRecord(number: number + 1, index: 0, opcode: opcode, timestamp: entry.timestamp, payload: entry.packet.bytes)
        }
    }

    /// A btsnoop file (H4, 1002), stamped with the script's times.
    public func write(to path: String) throws {
        let writer = try BTSnoopWriter(path: path)
        defer { writer.close() }
        for entry in entries {
            try writer.write(BTSnoop.Record(packet: entry.packet, direction: entry.direction, timestamp: entry.timestamp + BTSnoop.epochOffset))
        }
    }
}
