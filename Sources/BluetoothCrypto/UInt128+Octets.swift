import BluetoothCore

/// The two octet orders of a 128-bit key, block or tag. The specification prints and feeds
/// AES most significant octet first; protocols (SMP PDUs, GATT values) carry the same
/// numbers least significant octet first. Naming the order at every conversion leaves no
/// bare byte array whose order a caller has to guess.
extension UInt128 {
    /// From 16 octets, most significant first (the specification's and AES's order).
    public init(bigEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        guard bytes.count == 16 else { throw .lengthMismatch(declared: 16, actual: bytes.count) }
        var value: UInt128 = 0
        for byte in bytes { value = value << 8 | UInt128(byte) }
        self = value
    }

    /// From 16 octets, least significant first (the order SMP PDUs and GATT values carry).
    public init(littleEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        guard bytes.count == 16 else { throw .lengthMismatch(declared: 16, actual: bytes.count) }
        try self.init(bigEndian: bytes.reversed())
    }

    /// The 16 octets most significant first.
    public var bigEndianBytes: [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: self >> (8 * (15 - $0))) }
    }

    /// The 16 octets least significant first.
    public var littleEndianBytes: [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) }
    }
}
