import Glibc

/// A parsed btsnoop file.
public struct BTSnoopFile: Sendable, Hashable {
    public var datalink: BTSnoop.Datalink
    public var records: [BTSnoop.Record]

    /// Parses a whole capture held in memory. Total: any input gives records or a typed
    /// error, and no allocation exceeds the input's size.
    public init(parsing bytes: [UInt8]) throws(BTSnoopError) {
        guard bytes.count >= BTSnoop.fileHeaderLength, Array(bytes[0..<8]) == BTSnoop.magic else { throw .badMagic }
        let version = Self.bigEndian32(bytes, 8)
        guard version == BTSnoop.version else { throw .unsupportedVersion(version) }
        let datalinkValue = Self.bigEndian32(bytes, 12)
        guard let datalink = BTSnoop.Datalink(rawValue: datalinkValue) else { throw .unsupportedDatalink(datalinkValue) }
        var records: [BTSnoop.Record] = []
        var offset = BTSnoop.fileHeaderLength
        while offset < bytes.count {
            guard bytes.count - offset >= BTSnoop.recordHeaderLength else {
                throw .truncatedRecord(index: records.count, offset: offset)
            }
            let original = Self.bigEndian32(bytes, offset)
            let included = Self.bigEndian32(bytes, offset + 4)
            let flags = Self.bigEndian32(bytes, offset + 8)
            let drops = Self.bigEndian32(bytes, offset + 12)
            let timestamp = Int64(bitPattern: UInt64(Self.bigEndian32(bytes, offset + 16)) << 32
                | UInt64(Self.bigEndian32(bytes, offset + 20)))
            guard included <= original else {
                throw .inconsistentRecord(index: records.count, included: included, original: original)
            }
            let dataStart = offset + BTSnoop.recordHeaderLength
            guard UInt64(included) <= UInt64(bytes.count - dataStart) else {
                throw .truncatedRecord(index: records.count, offset: offset)
            }
            let dataEnd = dataStart + Int(included)
            records.append(BTSnoop.Record(
                flags: flags, timestamp: timestamp, data: Array(bytes[dataStart..<dataEnd]), drops: drops,
                originalLength: original))
            offset = dataEnd
        }
        self.datalink = datalink
        self.records = records
    }

    /// Reads and parses the file at `path`.
    public init(contentsOf path: String) throws(BTSnoopError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotRead(path: path, reason: Posix.message(errno)) }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, reason: Posix.message(errno))
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        try self.init(parsing: bytes)
    }

    private static func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }
}
