import BluetoothCore
import BluetoothCrypto
import Testing

/// The data signing algorithm (Core 5.4 Vol 3 Part H 2.4.5).
@Suite struct DataSigningTests {
    /// The RFC 4493 key, least significant octet first, as SMP's Signing Information
    /// carries a CSRK: 3c4fcf09 8815f7ab a6d2ae28 16157e2b.
    static let key = AESTests.rfc4493Key

    /// BlueZ's published sample (unit/test-crypto.c): no data, SignCounter 0, that key.
    @Test func emptyDataWithCounterZeroMatchesBlueZsSample() {
        #expect(DataSigning.signature(key: Self.key, data: [], counter: 0) == Hex.bytes("00000000 b3a85941 27ebc2c0"))
    }

    /// A Signed Write Command's signed octets (opcode D2, handle 0x002A, value aa bb cc)
    /// with two counters: expected values from Python's `cryptography` AES-CMAC, an
    /// independent implementation, fed the same octet order (the radio's `signed-write`).
    @Test func aSignedWriteMatchesAnIndependentCMAC() {
        let data = Hex.bytes("d22a00aabbcc") ?? []
        #expect(DataSigning.signature(key: Self.key, data: data, counter: 1) == Hex.bytes("01000000 d7c02f46 6a545a35"))
        #expect(DataSigning.signature(key: Self.key, data: data, counter: 0x0102_0304) == Hex.bytes("04030201 069eaafa ded10d4d"))
        #expect(DataSigning.counter(of: Hex.bytes("04030201 069eaafa ded10d4d") ?? []) == 0x0102_0304)
    }

    @Test func verifyAcceptsOnlyTheExactSignature() {
        let data = Hex.bytes("d22a00aabbcc") ?? []
        let good = DataSigning.signature(key: Self.key, data: data, counter: 7)
        #expect(DataSigning.verify(good, key: Self.key, data: data))
        for index in good.indices {
            var bad = good
            bad[index] ^= 0x01
            #expect(!DataSigning.verify(bad, key: Self.key, data: data), "octet \(index) flipped")
        }
        #expect(!DataSigning.verify(good, key: Self.key ^ 1, data: data))
        #expect(!DataSigning.verify(good, key: Self.key, data: data + [0]))
        #expect(!DataSigning.verify(good.dropLast(), key: Self.key, data: data))
        #expect(DataSigning.counter(of: good.dropLast()) == nil)
    }
}
