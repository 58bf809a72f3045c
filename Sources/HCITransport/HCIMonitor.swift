import BluetoothCore
import CBluetooth
import Glibc

/// One record from the Linux HCI monitor channel: what happened (`opcode`), on which
/// adapter (`index`, 0xFFFF for none), and the bytes (a packet without its indicator, or
/// the opcode's own structure).
public struct MonitorRecord: Sendable, Hashable {
    public var opcode: Opcode
    public var index: UInt16
    public var payload: [UInt8]
    /// When the kernel queued the record, in microseconds since the Unix epoch (its
    /// SO_TIMESTAMPNS, as btmon shows); nil when it gave none.
    public var timestamp: Int64?

    public init(opcode: Opcode, index: UInt16, payload: [UInt8], timestamp: Int64? = nil) {
        self.opcode = opcode
        self.index = index
        self.payload = payload
        self.timestamp = timestamp
    }

    /// The monitor opcodes (BlueZ doc/btsnoop.txt and the kernel's hci_mon.h); the same
    /// numbers are the flags of a btsnoop file with datalink 2001.
    public struct Opcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let newIndex = Opcode(rawValue: 0)
        public static let deleteIndex = Opcode(rawValue: 1)
        public static let commandPacket = Opcode(rawValue: 2)
        public static let eventPacket = Opcode(rawValue: 3)
        public static let aclTransmit = Opcode(rawValue: 4)
        public static let aclReceive = Opcode(rawValue: 5)
        public static let scoTransmit = Opcode(rawValue: 6)
        public static let scoReceive = Opcode(rawValue: 7)
        public static let openIndex = Opcode(rawValue: 8)
        public static let closeIndex = Opcode(rawValue: 9)
        public static let indexInfo = Opcode(rawValue: 10)
        public static let vendorDiagnostic = Opcode(rawValue: 11)
        public static let systemNote = Opcode(rawValue: 12)
        public static let userLogging = Opcode(rawValue: 13)
        public static let controlOpen = Opcode(rawValue: 14)
        public static let controlClose = Opcode(rawValue: 15)
        public static let controlCommand = Opcode(rawValue: 16)
        public static let controlEvent = Opcode(rawValue: 17)
        public static let isoTransmit = Opcode(rawValue: 18)
        public static let isoReceive = Opcode(rawValue: 19)

        public var description: String {
            let names = [
                "New Index", "Delete Index", "Command", "Event", "ACL TX", "ACL RX", "SCO TX", "SCO RX",
                "Open Index", "Close Index", "Index Info", "Vendor Diagnostic", "System Note", "User Logging",
                "Control Open", "Control Close", "Control Command", "Control Event", "ISO TX", "ISO RX",
            ]
            return Int(rawValue) < names.count ? names[Int(rawValue)] : "Opcode 0x\(Hex.string([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)]))"
        }

        /// The HCI packet this opcode carries and its direction, for the packet opcodes.
        public var packet: (type: HCIPacketType, direction: PacketDirection)? {
            switch rawValue {
            case 2: (.command, .hostToController)
            case 3: (.event, .controllerToHost)
            case 4: (.acl, .hostToController)
            case 5: (.acl, .controllerToHost)
            case 6: (.sco, .hostToController)
            case 7: (.sco, .controllerToHost)
            case 18: (.iso, .hostToController)
            case 19: (.iso, .controllerToHost)
            default: nil
            }
        }
    }

    /// Header: opcode, index, payload length, all little-endian u16.
    public static let headerLength = 6

    /// Decodes one record as the monitor socket returns it from one read().
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let opcode = try reader.readUInt16()
        let index = try reader.readUInt16()
        let length = Int(try reader.readUInt16())
        guard length == reader.remaining else { throw .lengthMismatch(declared: length, actual: reader.remaining) }
        self.init(opcode: Opcode(rawValue: opcode), index: index, payload: Array(bytes[Self.headerLength...]))
    }
}

/// A reader of the Linux HCI monitor channel (`hci-monitor`): every adapter's commands,
/// events and data, including user-channel traffic, plus index and system notes. Read
/// only, so it is not an ``HCITransport``. Needs CAP_NET_RAW.
public final class HCIMonitor: Sendable {
    private let loop: DescriptorLoop

    private init(loop: DescriptorLoop) { self.loop = loop }

    public static func open() throws(TransportError) -> HCIMonitor {
        let spec = TransportSpec.hciMonitor
        let fd = try HCISocket.open(spec: spec)
        try HCISocket.bind(fd, index: Int(bareble_HCI_DEV_NONE()), channel: bareble_HCI_CHANNEL_MONITOR(), spec: spec)
        return HCIMonitor(loop: try DescriptorLoop(fd: fd, spec: spec, name: spec.description, kernelTimestamps: true))
    }

    /// Starts the reader thread: `receive` gets each record on it, stamped with the
    /// kernel's time; records that do not decode are skipped. `closed` is called once.
    public func start(
        receive: @escaping @Sendable (MonitorRecord) -> Void,
        closed: @escaping @Sendable (TransportError?) -> Void
    ) throws(TransportError) {
        let loop = self.loop
        try loop.start(chunk: { bytes, _ in
            guard let bytes, var record = try? MonitorRecord(decoding: Array(bytes)) else { return nil }
            record.timestamp = loop.kernelTimestamp.map { $0 / 1000 }
            if !loop.isClosing { receive(record) }
            return nil
        }, closed: closed)
    }

    public func close() { loop.close() }
}
