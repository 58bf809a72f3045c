/// Reads little-endian fields from a byte buffer, throwing ``DecodeError/truncated(needed:available:)``
/// instead of reading past the end.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    public private(set) var offset: Int
    private let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    /// A reader over `bytes[range]`, sharing storage (no copy).
    public init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.offset = max(0, min(range.lowerBound, bytes.count))
        self.end = max(self.offset, min(range.upperBound, bytes.count))
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    @inline(__always)
    private mutating func advance(_ count: Int) throws(DecodeError) -> Int {
        guard count >= 0, count <= remaining else {
            throw .truncated(needed: count, available: remaining)
        }
        let start = offset
        offset += count
        return start
    }

    public mutating func readUInt8() throws(DecodeError) -> UInt8 {
        bytes[try advance(1)]
    }

    public mutating func readInt8() throws(DecodeError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    public mutating func readBool() throws(DecodeError) -> Bool {
        try readUInt8() != 0
    }

    /// An unsigned little-endian integer of `width` bytes (1...8).
    public mutating func readLittleEndian(width: Int) throws(DecodeError) -> UInt64 {
        let start = try advance(width)
        var value: UInt64 = 0
        for index in stride(from: width - 1, through: 0, by: -1) {
            value = value << 8 | UInt64(bytes[start + index])
        }
        return value
    }

    public mutating func readUInt16() throws(DecodeError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(width: 2))
    }

    public mutating func readUInt24() throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(width: 3))
    }

    public mutating func readUInt32() throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(width: 4))
    }

    public mutating func readUInt64() throws(DecodeError) -> UInt64 {
        try readLittleEndian(width: 8)
    }

    public mutating func readBytes(_ count: Int) throws(DecodeError) -> [UInt8] {
        let start = try advance(count)
        return Array(bytes[start..<start + count])
    }

    /// Everything left, possibly empty.
    public mutating func readRemaining() -> [UInt8] {
        let rest = Array(bytes[offset..<end])
        offset = end
        return rest
    }

    public mutating func skip(_ count: Int) throws(DecodeError) {
        _ = try advance(count)
    }

    /// A reader over the next `count` bytes; this reader moves past them.
    public mutating func subReader(_ count: Int) throws(DecodeError) -> ByteReader {
        let start = try advance(count)
        return ByteReader(bytes, range: start..<start + count)
    }

    /// Throws ``DecodeError/trailingBytes(count:)`` unless every byte was consumed.
    public func expectEnd() throws(DecodeError) {
        if remaining != 0 { throw .trailingBytes(count: remaining) }
    }
}
