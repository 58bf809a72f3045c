import BluetoothCore
import Glibc
import Logging
import Synchronization

/// The btsnoop capture format (RFC 1761 snoop, as Wireshark and btmon read it): a 16-byte
/// file header ("btsnoop\0", version 1, datalink), then records of original length,
/// included length, flags, cumulative drops (all big-endian u32), a big-endian i64
/// timestamp in microseconds since midnight, January 1st of year 0, and the data.
public enum BTSnoop {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let version: UInt32 = 1
    public static let fileHeaderLength = 16
    public static let recordHeaderLength = 24
    /// Microseconds from 0000-01-01 to the Unix epoch.
    public static let epochOffset: Int64 = 0x00dc_ddb3_0f2f_8000

    /// What each record's data is.
    public enum Datalink: UInt32, Sendable, Hashable {
        /// An H4 frame: indicator byte, then the packet.
        case h4 = 1002
        /// A Linux monitor record payload; flags carry (index << 16) | opcode.
        case linuxMonitor = 2001
    }

    /// One record. For ``Datalink/h4`` the flags are bit 0 = received (controller to
    /// host), bit 1 = command or event.
    public struct Record: Sendable, Hashable {
        public var flags: UInt32
        public var drops: UInt32
        /// Microseconds since 0000-01-01.
        public var timestamp: Int64
        /// Bytes in the original packet (at least `data.count`).
        public var originalLength: UInt32
        public var data: [UInt8]

        public init(flags: UInt32, timestamp: Int64, data: [UInt8], drops: UInt32 = 0, originalLength: UInt32? = nil) {
            self.flags = flags
            self.drops = drops
            self.timestamp = timestamp
            self.data = data
            self.originalLength = originalLength ?? UInt32(truncatingIfNeeded: data.count)
        }

        /// An H4 record for `packet` crossing in `direction`.
        public init(packet: HCIPacket, direction: PacketDirection, timestamp: Int64) {
            var flags: UInt32 = direction == .controllerToHost ? 1 : 0
            if packet.type == .command || packet.type == .event { flags |= 2 }
            self.init(flags: flags, timestamp: timestamp, data: packet.h4Bytes)
        }

        /// The packet of an H4 record, nil when the data is not a whole H4 frame.
        public var packet: HCIPacket? { try? H4Framer.decodeFrame(data) }
        public var direction: PacketDirection { flags & 1 == 1 ? .controllerToHost : .hostToController }
    }

    /// Now, in btsnoop's timestamp unit (CLOCK_REALTIME).
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec / 1000) + epochOffset
    }

    static func encodeHeader(_ datalink: Datalink) -> [UInt8] {
        var bytes = magic
        appendBigEndian(&bytes, UInt64(version), width: 4)
        appendBigEndian(&bytes, UInt64(datalink.rawValue), width: 4)
        return bytes
    }

    static func encode(_ record: Record) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordHeaderLength + record.data.count)
        appendBigEndian(&bytes, UInt64(record.originalLength), width: 4)
        appendBigEndian(&bytes, UInt64(record.data.count), width: 4)
        appendBigEndian(&bytes, UInt64(record.flags), width: 4)
        appendBigEndian(&bytes, UInt64(record.drops), width: 4)
        appendBigEndian(&bytes, UInt64(bitPattern: record.timestamp), width: 8)
        bytes.append(contentsOf: record.data)
        return bytes
    }

    private static func appendBigEndian(_ bytes: inout [UInt8], _ value: UInt64, width: Int) {
        for index in stride(from: width - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
        }
    }
}

/// Appends records to a btsnoop file without ever making the caller wait (it is called
/// on the transport's reader thread). Each record is written in place when the file takes
/// it at once, as a regular file does, so a crash loses at most the record being written;
/// what a FIFO or a stalled file does not take waits in a queue of `queueLimit` bytes for
/// a writer thread. Past that a record is dropped, counted in ``dropped`` and in the next
/// record's cumulative drops field (Wireshark shows it), and logged as an overflow.
/// Thread-safe.
public final class BTSnoopWriter: Sendable {
    public let path: String
    public let datalink: BTSnoop.Datalink
    /// Bytes of records that may wait for a file that does not take them at once.
    public static let defaultQueueLimit = 4 * 1024 * 1024
    /// How long ``close()`` waits for queued records to be written.
    public static let closeTimeout: Duration = .seconds(2)
    private let output: QueuedOutput
    private let logger: Logger
    /// The write error that ended the capture has been logged.
    private let failureLogged = Atomic(false)

    /// Creates (or truncates) `path` and writes the file header. A FIFO's open waits for
    /// its reader, as tcpdump's and btmon's do.
    public init(
        path: String, datalink: BTSnoop.Datalink = .h4, queueLimit: Int = BTSnoopWriter.defaultQueueLimit,
        logger: Logger = Logger(label: DescriptorTransport.defaultLogLabel)
    ) throws(BTSnoopError) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: Posix.message(errno)) }
        if let code = Posix.setNonBlocking(fd) {
            Glibc.close(fd)
            throw .cannotWrite(path: path, reason: Posix.message(code))
        }
        self.path = path
        self.datalink = datalink
        self.logger = logger
        output = QueuedOutput(fd: fd, limit: max(queueLimit, BTSnoop.fileHeaderLength), ownsDescriptor: true)
        output.write { _ in BTSnoop.encodeHeader(datalink) }
    }

    deinit { close() }

    /// Records dropped because the file did not keep up (or had failed).
    public var dropped: Int { output.refusals.total }

    /// Bytes of records accepted and not yet in the file.
    public var queuedBytes: Int { output.queuedBytes }

    /// Writes or queues `record`, its drops field raised by the records dropped before it;
    /// a record the queue has no room for is dropped and counted. Throws when the file
    /// can no longer be written (closed, or a write failed).
    public func write(_ record: BTSnoop.Record) throws(BTSnoopError) {
        let accepted = output.write { refusals in
            var record = record
            record.drops = record.drops &+ UInt32(clamping: refusals.total)
            return BTSnoop.encode(record)
        }
        guard !accepted else { return }
        if let failure = output.failure {
            logFailureOnce(failure)
            throw .cannotWrite(path: path, reason: Posix.message(failure))
        }
        if output.isClosed { throw .cannotWrite(path: path, reason: "the capture is closed") }
        logger.droppedForOverflow(
            "capture record dropped: \(path) is not taking records as fast as they come",
            counter: "captureDropped", count: dropped, metadata: ["queueLimit": "\(output.limit)"])
    }

    /// Records `packet` crossing in `direction`, stamped now (H4 files).
    public func write(_ packet: HCIPacket, direction: PacketDirection) throws(BTSnoopError) {
        try write(BTSnoop.Record(packet: packet, direction: direction, timestamp: BTSnoop.now()))
    }

    /// Records a monitor record, stamped with the kernel's time when it has one, else now
    /// (Linux monitor files).
    public func write(_ record: MonitorRecord) throws(BTSnoopError) {
        let flags = UInt32(record.index) << 16 | UInt32(record.opcode.rawValue)
        let timestamp = record.timestamp.map { $0 &+ BTSnoop.epochOffset } ?? BTSnoop.now()
        try write(BTSnoop.Record(flags: flags, timestamp: timestamp, data: record.payload))
    }

    /// The one line that says the capture ended: its callers (a capturing transport) go on
    /// without it and do not report each refused record.
    private func logFailureOnce(_ failure: Int32) {
        guard !failureLogged.exchange(true, ordering: .relaxed) else { return }
        logger.warning(
            "capture stopped: \(path) can no longer be written; packets still flow, unrecorded",
            metadata: ["reason": "\(Posix.message(failure))", "captureDropped": "\(dropped)"])
    }

    /// Writes what is queued (waiting up to ``closeTimeout``) and closes the file.
    public func close() {
        let unwritten = output.close(within: Self.closeTimeout)
        // The writer thread failed on the last records: nothing refused since said so.
        if let failure = output.failure { logFailureOnce(failure) }
        if unwritten > 0 {
            logger.warning(
                "capture closed before the file took everything: the end of \(path) is missing",
                metadata: ["unwrittenBytes": "\(unwritten)", "captureDropped": "\(dropped)"])
        }
    }
}

/// Why a btsnoop file could not be written or read.
public enum BTSnoopError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotWrite(path: String, reason: String)
    case cannotRead(path: String, reason: String)
    case badMagic
    case unsupportedVersion(UInt32)
    case unsupportedDatalink(UInt32)
    /// A record header or body ends early (the file was cut, e.g. by a crash mid-write).
    case truncatedRecord(index: Int, offset: Int)
    /// A record says it holds more than it originally had.
    case inconsistentRecord(index: Int, included: UInt32, original: UInt32)

    public var description: String {
        switch self {
        case let .cannotWrite(path, reason): "cannot write capture \(path): \(reason); check the directory exists and is writable"
        case let .cannotRead(path, reason): "cannot read capture \(path): \(reason)"
        case .badMagic: "not a btsnoop file (no \"btsnoop\" magic at the start)"
        case let .unsupportedVersion(version): "btsnoop version \(version) is not supported (only 1)"
        case let .unsupportedDatalink(value): "btsnoop datalink \(value) is not supported (only 1002 H4 and 2001 Linux monitor)"
        case let .truncatedRecord(index, offset): "record \(index) at byte \(offset) is cut short: the capture ends mid-record"
        case let .inconsistentRecord(index, included, original):
            "record \(index) includes \(included) bytes but its packet had only \(original)"
        }
    }
}
