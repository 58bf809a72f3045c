import BluetoothCore
import Testing

@Suite struct CompanyIdentifierTests {
    @Test func wellKnownCompanies() {
        #expect(CompanyIdentifiers.name(for: 0x004C) == "Apple, Inc.")
        #expect(CompanyIdentifiers.name(for: 0x0006) == "Microsoft")
        #expect(CompanyIdentifiers.name(for: 0x00E0) == "Google")
        #expect(CompanyIdentifiers.name(for: 0x0000) == "Ericsson AB")
        #expect(CompanyIdentifiers.name(for: 0x000F) == "Broadcom Corporation")
        #expect(CompanyIdentifiers.name(for: 0x0059) == "Nordic Semiconductor ASA")
    }

    @Test func unassignedIdentifiersHaveNoName() {
        #expect(CompanyIdentifiers.name(for: 0xFFFF) == nil)
        #expect(CompanyIdentifiers.name(for: 0xFFFE) == nil)
    }

    @Test func tableIsSortedAndComplete() {
        let ids = CompanyIdentifiers.allIdentifiers
        #expect(ids.count > 3000)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        for id in ids {
            let name = CompanyIdentifiers.name(for: id)
            #expect(name?.isEmpty == false, "0x\(String(id, radix: 16))")
        }
    }

    @Test func namesKeepTheirCharacters() {
        // Non-ASCII and quotes survive the generated literal.
        #expect(CompanyIdentifiers.name(for: 0x0225) == "Nestlé Nespresso S.A.")
        #expect(CompanyIdentifiers.name(for: 0x0380) == "LLC \"MEGA-F service\"")
    }
}
