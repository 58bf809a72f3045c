/// Appends little-endian fields to a growing byte buffer.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: UInt8) { bytes.append(value) }
    public mutating func write(_ value: Int8) { bytes.append(UInt8(bitPattern: value)) }
    public mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// The low `width` bytes of `value`, least significant first.
    public mutating func writeLittleEndian(_ value: UInt64, width: Int) {
        for index in 0..<width {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
        }
    }

    public mutating func write(_ value: UInt16) { writeLittleEndian(UInt64(value), width: 2) }
    public mutating func writeUInt24(_ value: UInt32) { writeLittleEndian(UInt64(value), width: 3) }
    public mutating func write(_ value: UInt32) { writeLittleEndian(UInt64(value), width: 4) }
    public mutating func write(_ value: UInt64) { writeLittleEndian(value, width: 8) }
    public mutating func write<C: Collection>(contentsOf data: C) where C.Element == UInt8 {
        bytes.append(contentsOf: data)
    }
}
