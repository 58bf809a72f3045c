import BluetoothCore
import Testing

@Suite struct AddressTests {
    @Test func parsesAndPrintsMostSignificantFirst() throws {
        let address = try #require(BluetoothAddress("c4:4b:4d:00:00:01"))
        #expect(address.description == "C4:4B:4D:00:00:01")
        #expect(address.littleEndianBytes == [0x01, 0x00, 0x00, 0x4D, 0x4B, 0xC4])
        #expect(try BluetoothAddress(littleEndian: address.littleEndianBytes) == address)
    }

    @Test(arguments: ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:GG", "AAA:BB:CC:DD:EE:F", "AA::CC:DD:EE:FF"])
    func rejectsMalformedText(_ text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func rejectsWrongByteCount() {
        #expect(throws: DecodeError.lengthMismatch(declared: 6, actual: 5)) {
            try BluetoothAddress(littleEndian: [1, 2, 3, 4, 5])
        }
    }

    @Test func classifiesRandomAddressesByTopBits() throws {
        let cases: [(String, AddressType, AddressKind)] = [
            ("F0:0D:00:00:00:01", .public, .public),
            ("C4:4B:4D:00:00:01", .random, .randomStatic),
            ("4B:00:11:22:33:44", .random, .resolvablePrivate),
            ("3B:00:11:22:33:44", .random, .nonResolvablePrivate),
            ("8B:00:11:22:33:44", .random, .randomReserved),
            ("C4:4B:4D:00:00:01", .randomIdentity, .randomStatic),
        ]
        for (text, type, kind) in cases {
            let device = DeviceAddress(try #require(BluetoothAddress(text)), type: type)
            #expect(device.kind == kind, "\(text) \(type)")
        }
    }

    @Test func parsesTypeSuffix() throws {
        let random = try #require(DeviceAddress("C4:4B:4D:00:00:01/random"))
        #expect(random.type == .random)
        #expect(random.description == "C4:4B:4D:00:00:01/random")
        #expect(DeviceAddress("C4:4B:4D:00:00:01")?.type == .public)
        #expect(DeviceAddress("C4:4B:4D:00:00:01", defaultType: .random)?.type == .random)
        #expect(DeviceAddress("C4:4B:4D:00:00:01/x") == nil)
    }
}
