import BluetoothCore
import BluetoothCrypto
import Testing

@Suite struct AESTests {
    /// Sample data is printed most significant octet first, as the specification and the
    /// RFCs print it (../shared/notes/vectors.md).
    static func value(_ hex: String) -> UInt128 {
        guard let bytes = Hex.bytes(hex), let value = try? UInt128(bigEndian: bytes) else {
            fatalError("bad 128-bit sample \(hex)")
        }
        return value
    }

    /// FIPS-197 Appendix C.1: pins e's byte order (most significant octet = first AES octet).
    @Test func eMatchesFIPS197() {
        let key = Self.value("00010203 04050607 08090a0b 0c0d0e0f")
        let plaintext = Self.value("00112233 44556677 8899aabb ccddeeff")
        #expect(AES128.e(key: key, plaintextData: plaintext) == Self.value("69c4e0d8 6a7b0430 d8cdb780 70b4c55a"))
    }

    /// The s1 sample data of Core Vol 3 Part H Appendix D: s1 is a single e of r' (the low
    /// halves of r1 and r2) under a zero key, so the block function is pinned by the
    /// specification's own data, not only by FIPS.
    @Test func eMatchesTheSpecificationS1Sample() {
        let r1 = Self.value("000F0E0D 0C0B0A09 11223344 55667788")
        let r2 = Self.value("01020304 05060708 99AABBCC DDEEFF00")
        let lowHalf: UInt128 = (1 << 64) - 1
        let rPrime = (r1 & lowHalf) << 64 | (r2 & lowHalf)
        #expect(AES128.e(key: 0, plaintextData: rPrime) == Self.value("9a1fe1f0 e8b0f49b 5b4216ae 796da062"))
    }

    static let rfc4493Key = value("2b7e1516 28aed2a6 abf71588 09cf4f3c")
    static let rfc4493Message: [UInt8] = Hex.bytes(
        "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411"
            + " e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710"
    ) ?? []

    /// RFC 4493 section 4, examples 1-4 (also Core 5.4 Vol 3 Part H D.1): empty, one block,
    /// a partial last block, four blocks.
    @Test(arguments: [
        (0, "bb1d6929 e9593728 7fa37d12 9b756746"),
        (16, "070a16b4 6b4d4144 f79bdd9d d04a287c"),
        (40, "dfa66747 de9ae630 30ca3261 1497c827"),
        (64, "51f0bebf 7e3b9d92 fc497417 79363cfe"),
    ])
    func aesCMACMatchesRFC4493(length: Int, expected: String) {
        #expect(Self.rfc4493Message.count == 64)
        let mac = AESCMAC.mac(key: Self.rfc4493Key, message: Self.rfc4493Message.prefix(length))
        #expect(mac == Self.value(expected))
    }

    /// The two octet orders name the same number: a GATT value carries the tag reversed.
    @Test func octetOrdersRoundTrip() throws {
        let value = Self.value("00010203 04050607 08090a0b 0c0d0e0f")
        #expect(value.bigEndianBytes == Array(0...15))
        #expect(value.littleEndianBytes == Array((0...15).reversed()))
        #expect(try UInt128(littleEndian: value.littleEndianBytes) == value)
        #expect(throws: DecodeError.self) { try UInt128(bigEndian: [1, 2, 3]) }
    }
}
