import SMP
import Testing

@Suite struct AESTests {
    /// FIPS-197 Appendix C.1: pins e's byte order (most significant octet = first AES octet).
    @Test func eMatchesFIPS197() {
        let key = SampleData.v128("00010203 04050607 08090a0b 0c0d0e0f")
        let plaintext = SampleData.v128("00112233 44556677 8899aabb ccddeeff")
        #expect(CryptoToolbox.e(key: key, plaintextData: plaintext) == SampleData.v128("69c4e0d8 6a7b0430 d8cdb780 70b4c55a"))
    }

    static let rfc4493Key = SampleData.v128("2b7e1516 28aed2a6 abf71588 09cf4f3c")
    static let rfc4493Message = SampleData.bytes(
        "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411"
            + " e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710"
    )

    /// RFC 4493 section 4, examples 1-4: empty, one block, a partial last block, four blocks.
    @Test(arguments: [
        (0, "bb1d6929 e9593728 7fa37d12 9b756746"),
        (16, "070a16b4 6b4d4144 f79bdd9d d04a287c"),
        (40, "dfa66747 de9ae630 30ca3261 1497c827"),
        (64, "51f0bebf 7e3b9d92 fc497417 79363cfe"),
    ])
    func aesCMACMatchesRFC4493(length: Int, expected: String) {
        let mac = CryptoToolbox.aesCMAC(key: Self.rfc4493Key, message: Array(Self.rfc4493Message.prefix(length)))
        #expect(mac == SampleData.v128(expected))
    }
}
