/// A 48-bit Bluetooth device address (BD_ADDR), without its type.
///
/// Text is most significant byte first ("AA:BB:CC:DD:EE:FF"); HCI and the air carry it
/// least significant byte first (``littleEndianBytes``).
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 48-bit value; the top 16 bits are always zero.
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    public static let zero = BluetoothAddress(0)

    /// From the six bytes as HCI carries them (least significant first).
    public init(littleEndian bytes: [UInt8]) throws(DecodeError) {
        guard bytes.count == 6 else { throw .lengthMismatch(declared: 6, actual: bytes.count) }
        var value: UInt64 = 0
        for byte in bytes.reversed() { value = value << 8 | UInt64(byte) }
        self.init(value)
    }

    /// Parses "AA:BB:CC:DD:EE:FF" (also with '-' separators, any case).
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.init(value)
    }

    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The most significant byte, whose top two bits classify a random address.
    public var mostSignificantByte: UInt8 { UInt8(truncatingIfNeeded: value >> 40) }

    public var description: String {
        Hex.string(littleEndianBytes.reversed(), separator: ":")
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
}

extension ByteReader {
    public mutating func readAddress() throws(DecodeError) -> BluetoothAddress {
        BluetoothAddress(try readLittleEndian(width: 6))
    }
}

extension ByteWriter {
    public mutating func write(_ address: BluetoothAddress) {
        writeLittleEndian(address.value, width: 6)
    }
}
