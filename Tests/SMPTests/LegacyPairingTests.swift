import BluetoothCore
import SMP
import Testing

@Suite struct LegacyPairingTests {
    /// Core Vol 3 Part H 2.2.3's sample. preq and pres are printed as numbers; the function
    /// takes the PDU octets as sent, so the printed text is reversed here.
    @Test func c1MatchesSpecificationSample() throws {
        let confirm = try CryptoToolbox.c1(
            k: .zero,
            r: SampleData.v128("5783D521 56AD6F0E 6388274E C6702EE0"),
            pairingRequest: SampleData.bytes("07071000000101").reversed(),
            pairingResponse: SampleData.bytes("05000800000302").reversed(),
            initiator: SampleData.address("A1:A2:A3:A4:A5:A6", .random),
            responder: SampleData.address("B1:B2:B3:B4:B5:B6", .public)
        )
        #expect(confirm == SampleData.v128("1e1e3fef 878988ea d2a74dc5 bef13b86"))
    }

    @Test func c1TakesThePairingRequestInAirOrder() throws {
        // The Pairing Request of the sample as a PDU: opcode 0x01 first.
        let pdu: [UInt8] = [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07]
        #expect(SampleData.bytes("07071000000101").reversed() == pdu)
    }

    @Test(arguments: [0, 6, 8])
    func c1RejectsCommandsThatAreNotSevenOctets(length: Int) {
        #expect(throws: DecodeError.lengthMismatch(declared: 7, actual: length)) {
            try CryptoToolbox.c1(
                k: .zero, r: .zero,
                pairingRequest: [UInt8](repeating: 1, count: length),
                pairingResponse: [UInt8](repeating: 2, count: 7),
                initiator: SampleData.address("A1:A2:A3:A4:A5:A6", .random),
                responder: SampleData.address("B1:B2:B3:B4:B5:B6", .public)
            )
        }
    }

    @Test func s1MatchesSpecificationSample() {
        let stk = CryptoToolbox.s1(
            k: .zero,
            r1: SampleData.v128("000F0E0D 0C0B0A09 11223344 55667788"),
            r2: SampleData.v128("01020304 05060708 99AABBCC DDEEFF00")
        )
        #expect(stk == SampleData.v128("9a1fe1f0 e8b0f49b 5b4216ae 796da062"))
    }
}
