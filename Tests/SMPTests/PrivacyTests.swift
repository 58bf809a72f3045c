import BluetoothCore
import SMP
import TestSupport
import Testing

@Suite struct PrivacyTests {
    @Test func ahMatchesSpecificationSample() {
        let hash = CryptoToolbox.ah(k: SampleData.v128("ec0234a3 57c8ad05 341010a6 0a397d9b"), r: 0x70_8194)
        #expect(hash == 0x0D_FBAA)
    }

    @Test func resolvablePrivateAddressRoundTrips() {
        var random = SeededRandom(seed: 0x5EC0_417E)
        for _ in 0..<200 {
            let irk = SMPValue128.random(using: &random)
            let address = BluetoothAddress.resolvablePrivate(irk: irk, using: &random)
            #expect(DeviceAddress(address, type: .random).kind == .resolvablePrivate)
            let prandRandomBits = (address.value >> 24) & 0x3F_FFFF
            #expect(prandRandomBits != 0 && prandRandomBits != 0x3F_FFFF)
            #expect(address.resolves(with: irk))
            #expect(!address.resolves(with: SMPValue128(irk.value ^ 1)))
            #expect(!address.resolves(with: SMPValue128.random(using: &random)))
        }
    }

    @Test func theSpecificationSampleAddressResolves() throws {
        let irk = SampleData.v128("ec0234a3 57c8ad05 341010a6 0a397d9b")
        // prand 0x708194 has top bits 0b01; the hash fills the low three octets.
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(address.resolves(with: irk))
        #expect(!(try #require(BluetoothAddress("70:81:94:0D:FB:AB"))).resolves(with: irk))
    }

    @Test func onlyAddressesOfTheResolvableFormResolve() throws {
        let irk = SampleData.v128("ec0234a3 57c8ad05 341010a6 0a397d9b")
        // Same low 46 bits as the sample RPA but static (0b11) or non-resolvable (0b00) top bits.
        #expect(!(try #require(BluetoothAddress("F0:81:94:0D:FB:AA"))).resolves(with: irk))
        #expect(!(try #require(BluetoothAddress("30:81:94:0D:FB:AA"))).resolves(with: irk))
    }
}
