import BluetoothCore

/// A P-256 public key as SMP exchanges it (Pairing Public Key, Core Vol 3 Part H 3.5.6):
/// the affine coordinates X and Y, without any validation. Validation belongs to the moment
/// the key is used, in ``P256KeyPair/dhKey(peerPublicKey:allowingDebugKey:)``.
public struct P256PublicKey: Hashable, Sendable, CustomStringConvertible {
    public var x: SMPValue256
    public var y: SMPValue256

    public init(x: SMPValue256, y: SMPValue256) {
        self.x = x
        self.y = y
    }

    /// From the 64 octets of a Pairing Public Key PDU's payload: X then Y, each least
    /// significant octet first.
    public init(littleEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        guard bytes.count == 64 else { throw .lengthMismatch(declared: 64, actual: bytes.count) }
        let array = Array(bytes)
        self.init(x: try SMPValue256(littleEndian: array[0..<32]), y: try SMPValue256(littleEndian: array[32..<64]))
    }

    /// From X || Y, each most significant octet first (the specification's and swift-crypto's
    /// raw representation).
    public init(bigEndian bytes: some Collection<UInt8>) throws(DecodeError) {
        guard bytes.count == 64 else { throw .lengthMismatch(declared: 64, actual: bytes.count) }
        let array = Array(bytes)
        self.init(x: try SMPValue256(bigEndian: array[0..<32]), y: try SMPValue256(bigEndian: array[32..<64]))
    }

    /// X then Y, each least significant octet first: the Pairing Public Key payload.
    public var littleEndianBytes: [UInt8] { x.littleEndianBytes + y.littleEndianBytes }

    /// X || Y, each most significant octet first.
    public var bigEndianBytes: [UInt8] { x.bigEndianBytes + y.bigEndianBytes }

    /// The debug public key every device in SMP debug mode uses (Core Vol 3 Part H 2.3.5.6.1).
    public static let debug = P256PublicKey(
        x: SMPValue256(high: 0x20b0_03d2_f297_be2c_5e2c_83a7_e9f9_a5b9, low: 0xeff4_9111_acf4_fddb_cc03_0148_0e35_9de6),
        y: SMPValue256(high: 0xdc80_9c49_652a_eb6d_6332_9abf_5a52_155c, low: 0x7663_45c2_8fed_3024_741c_8ed0_1589_d28b)
    )

    /// Whether this is the debug key: a link keyed from it can be decrypted by any sniffer,
    /// so a device accepts it only in debug mode.
    public var isDebugKey: Bool { self == .debug }

    public var description: String { "X \(x), Y \(y)" }
}
