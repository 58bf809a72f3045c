import BluetoothCore
import BluetoothCrypto

/// A 128-bit value of the SMP crypto toolbox: a key (TK, STK, LTK, IRK, MacKey), a random
/// number (Mrand, Na, Nb), a confirm value or a check value.
///
/// The specification prints and defines every toolbox function with the most significant
/// octet first, while SMP PDUs carry the same values least significant octet first. Keeping
/// the value as a number and naming the byte order at every conversion (``bigEndianBytes``
/// for the specification's order, ``littleEndianBytes`` for the air) leaves no bare byte
/// array whose order a caller has to guess.
public struct SMPValue128: Hashable, Sendable, CustomStringConvertible {
    public var value: UInt128

    public init(_ value: UInt128) { self.value = value }

    public static let zero = SMPValue128(0)

    /// From 16 octets, most significant first (the specification's order).
    public init(bigEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        self.init(try UInt128(bigEndian: bytes))
    }

    /// From 16 octets, least significant first (the order SMP PDUs carry).
    public init(littleEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        self.init(try UInt128(littleEndian: bytes))
    }

    /// Parses 32 hex digits written most significant first, as the specification prints
    /// them (spaces allowed: "ec0234a3 57c8ad05 ...").
    public init?(hex: String) {
        guard let bytes = Hex.bytes(hex), let value = try? SMPValue128(bigEndian: bytes) else { return nil }
        self = value
    }

    /// The 16 octets most significant first: the order of the specification and of the AES
    /// block and key inputs (Core Vol 3 Part H 2.2.1).
    public var bigEndianBytes: [UInt8] { value.bigEndianBytes }

    /// The 16 octets least significant first, as SMP PDUs carry them.
    public var littleEndianBytes: [UInt8] { value.littleEndianBytes }

    /// A fresh random value. The default generator is the system's, which Swift documents as
    /// cryptographically secure: pairing randoms and IRKs must be unpredictable.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> SMPValue128 {
        SMPValue128(UInt128(generator.next()) << 64 | UInt128(generator.next()))
    }

    public static func random() -> SMPValue128 {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public static func ^ (lhs: SMPValue128, rhs: SMPValue128) -> SMPValue128 {
        SMPValue128(lhs.value ^ rhs.value)
    }

    /// Lowercase hex, most significant first, in the specification's groups of eight digits.
    public var description: String { groupedHex(bigEndianBytes) }
}

/// "ec0234a3 57c8ad05 ...": how the specification prints sample data, so a failing test's
/// output can be compared with it by eye.
func groupedHex(_ bytes: [UInt8]) -> String {
    var out = ""
    for start in stride(from: 0, to: bytes.count, by: 4) {
        if start > 0 { out += " " }
        out += Hex.string(bytes[start..<min(start + 4, bytes.count)]).lowercased()
    }
    return out
}
