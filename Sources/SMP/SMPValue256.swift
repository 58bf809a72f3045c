import BluetoothCore

/// A 256-bit value of the SMP crypto toolbox: a P-256 coordinate, a private key or the
/// DHKey. Stored as a number, like ``SMPValue128``, so that byte order only appears where
/// bytes are made.
public struct SMPValue256: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var high: UInt128
    public var low: UInt128

    public init(high: UInt128, low: UInt128) {
        self.high = high
        self.low = low
    }

    public static let zero = SMPValue256(high: 0, low: 0)

    /// From 32 octets, most significant first (the specification's order).
    public init(bigEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        guard bytes.count == 32 else { throw .lengthMismatch(declared: 32, actual: bytes.count) }
        let array = Array(bytes)
        self.init(
            high: try SMPValue128(bigEndian: array[0..<16]).value,
            low: try SMPValue128(bigEndian: array[16..<32]).value
        )
    }

    /// From 32 octets, least significant first (the order SMP PDUs carry).
    public init(littleEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        guard bytes.count == 32 else { throw .lengthMismatch(declared: 32, actual: bytes.count) }
        try self.init(bigEndian: bytes.reversed())
    }

    /// Parses 64 hex digits written most significant first (spaces allowed).
    public init?(hex: String) {
        guard let bytes = Hex.bytes(hex), let value = try? SMPValue256(bigEndian: bytes) else { return nil }
        self = value
    }

    /// The 32 octets most significant first: the specification's order, and the order the
    /// AES-CMAC based functions (f4, f5, g2) take their 256-bit inputs in.
    public var bigEndianBytes: [UInt8] {
        SMPValue128(high).bigEndianBytes + SMPValue128(low).bigEndianBytes
    }

    /// The 32 octets least significant first, as SMP PDUs carry them.
    public var littleEndianBytes: [UInt8] {
        SMPValue128(low).littleEndianBytes + SMPValue128(high).littleEndianBytes
    }

    public static func < (lhs: SMPValue256, rhs: SMPValue256) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    public var description: String { groupedHex(bigEndianBytes) }
}
