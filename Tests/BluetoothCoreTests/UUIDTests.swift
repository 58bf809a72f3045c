import BluetoothCore
import Testing

@Suite struct UUIDTests {
    @Test func shortFormsExpandOverTheBaseUUID() throws {
        let heartRate = BluetoothUUID(UInt16(0x180D))
        #expect(heartRate.uuidString128 == "0000180D-0000-1000-8000-00805F9B34FB")
        #expect(heartRate.description == "180D")
        #expect(BluetoothUUID("180d") == heartRate)
        #expect(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB") == heartRate)
        #expect(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB")?.description == "180D")
        #expect(heartRate.littleEndianBytes == [0x0D, 0x18])
    }

    @Test func thirtyTwoBitForm() throws {
        let uuid = try #require(BluetoothUUID("1234ABCD"))
        #expect(uuid.byteWidth == 4)
        #expect(uuid.description == "1234ABCD")
        #expect(uuid.littleEndianBytes == [0xCD, 0xAB, 0x34, 0x12])
        #expect(try BluetoothUUID(littleEndian: [0xCD, 0xAB, 0x34, 0x12]) == uuid)
    }

    @Test func textAppendedAsBytesIsTheDescription() throws {
        // What `scan --json` writes, after bytes already in its buffer.
        for text in ["180D", "0001", "FFFF", "1234ABCD", "7905F431-B5CE-4E99-A40F-4B1E122D00D0",
                     "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"] {
            let uuid = try #require(BluetoothUUID(text))
            var bytes = Array("x".utf8)
            uuid.appendDescription(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "x" + text)
            #expect(uuid.description == text)
        }
    }

    @Test func fullForm() throws {
        let ancs = try #require(BluetoothUUID("7905F431-B5CE-4E99-A40F-4B1E122D00D0"))
        #expect(ancs.byteWidth == 16)
        #expect(ancs.description == "7905F431-B5CE-4E99-A40F-4B1E122D00D0")
        let wire = ancs.littleEndianBytes
        #expect(wire.first == 0xD0 && wire.last == 0x79)
        #expect(try BluetoothUUID(littleEndian: wire) == ancs)
        #expect(BluetoothUUID("7905f431b5ce4e99a40f4b1e122d00d0") == ancs)
    }

    @Test(arguments: ["", "18", "180DX", "12345", "7905F431-B5CE-4E99-A40F4B1E-122D00D0", "GGGG"])
    func rejectsMalformedText(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    /// `Character.isHexDigit` admits fullwidth forms that integer parsing rejects; any
    /// non-ASCII text is a nil, never a trap.
    @Test(arguments: [
        "\u{FF11}\u{FF18}\u{FF10}\u{FF24}", "18\u{FF10}D", "\u{FF11}234ABCD",
        "0000180D-0000-1000-8000-00805F9B34F\u{FF22}", "\u{0661}\u{0662}\u{0663}\u{0664}",
        "180D\u{0301}", "1\u{00B2}3D", "\u{FF21}\u{FF22}\u{FF23}\u{FF24}-", "-\u{0301}180D",
    ])
    func nonASCIITextIsRejected(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func rejectsWrongWireLengths() {
        for count in [0, 1, 3, 5, 15, 17] {
            #expect(throws: DecodeError.self) { try BluetoothUUID(littleEndian: Array(repeating: 0, count: count)) }
        }
    }
}
