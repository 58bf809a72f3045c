import SMP
import Testing

@Suite struct SecureConnectionsTests {
    @Test func f4MatchesSpecificationSample() {
        let confirm = CryptoToolbox.f4(u: SampleData.f4U, v: SampleData.f4V, x: SampleData.f4X, z: 0)
        #expect(confirm == SampleData.v128("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    @Test func f5MatchesSpecificationSample() {
        let keys = CryptoToolbox.f5(w: SampleData.dhKey, n1: SampleData.n1, n2: SampleData.n2, a1: SampleData.a1, a2: SampleData.a2)
        #expect(keys.macKey == SampleData.macKey)
        #expect(keys.longTermKey == SampleData.longTermKey)
    }

    @Test func f6MatchesSpecificationSample() {
        let check = CryptoToolbox.f6(
            w: SampleData.macKey, n1: SampleData.n1, n2: SampleData.n2,
            r: SampleData.v128("12a3343b b453bb54 08da42d2 0c2d0fc8"),
            ioCap: IOCap(authenticationRequirements: 0x01, oobDataFlag: 0x01, ioCapability: 0x02),
            a1: SampleData.a1, a2: SampleData.a2
        )
        #expect(check == SampleData.v128("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    @Test func g2MatchesSpecificationSampleAndItsDisplayedDigits() {
        let value = CryptoToolbox.g2(u: SampleData.f4U, v: SampleData.f4V, x: SampleData.f4X, y: SampleData.n2)
        #expect(value == 0x2F9E_D5BA)
        #expect(CryptoToolbox.numericComparisonValue(value) == 938_554)
    }

    @Test func h6MatchesSpecificationSample() {
        let key = CryptoToolbox.h6(w: SampleData.v128("ec0234a3 57c8ad05 341010a6 0a397d9b"), keyID: 0x6C65_6272)
        #expect(key == SampleData.v128("2d9ae102 e76dc91c e8d3a9e2 80b16399"))
    }

    @Test func h7MatchesSpecificationSample() {
        let key = CryptoToolbox.h7(
            salt: SampleData.v128("00000000 00000000 00000000 746D7031"),
            w: SampleData.v128("ec0234a3 57c8ad05 341010a6 0a397d9b")
        )
        #expect(key == SampleData.v128("fb173597 c6a3c0ec d2998c2a 75a57011"))
    }
}
