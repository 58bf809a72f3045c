import BluetoothCore
import GATT
import Testing

@Suite struct CharacteristicDecoderTests {
    @Test func decodesBatteryLevel() throws {
        #expect(try BatteryLevel(bytes: [0x00]).percentage == 0)
        #expect(try BatteryLevel(bytes: [0x64]).description == "100%")
        #expect(throws: DecodeError.invalidValue(field: "Battery Level", value: 101)) { try BatteryLevel(bytes: [101]) }
        #expect(throws: DecodeError.invalidValue(field: "Battery Level", value: 255)) { try BatteryLevel(bytes: [255]) }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try BatteryLevel(bytes: []) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try BatteryLevel(bytes: [50, 0]) }
        #expect(BatteryLevel(percentage: 101) == nil)
    }

    @Test(arguments: [
        (0, "Other"), (1, "Chest"), (2, "Wrist"), (3, "Finger"), (4, "Hand"), (5, "Ear Lobe"), (6, "Foot"),
        (7, "Reserved (0x07)"), (255, "Reserved (0xFF)"),
    ] as [(UInt8, String)])
    func namesBodySensorLocations(_ raw: UInt8, _ name: String) throws {
        let location = try BodySensorLocation(bytes: [raw])
        #expect(location.description == name)
        #expect(location.rawValue == raw)
    }

    @Test func rejectsMalformedBodySensorLocation() {
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { try BodySensorLocation(bytes: []) }
        #expect(throws: DecodeError.trailingBytes(count: 2)) { try BodySensorLocation(bytes: [1, 2, 3]) }
    }

    @Test func decodesPnPID() throws {
        let pnp = try PnPID(bytes: [0x01, 0x0D, 0x00, 0x00, 0x00, 0x10, 0x01])
        #expect(pnp.vendorIDSource == .bluetoothSIG)
        #expect(pnp.vendorID == 0x000D)
        #expect(pnp.vendorName == "Texas Instruments Inc.")
        #expect(pnp.productID == 0x0000)
        #expect(pnp.productVersion == 0x0110)
        #expect(pnp.productVersionText == "1.1.0")
        #expect(pnp.description == "Bluetooth SIG vendor 0x000D (Texas Instruments Inc.), product 0x0000, version 1.1.0")
        #expect(pnp.bytes == [0x01, 0x0D, 0x00, 0x00, 0x00, 0x10, 0x01])
    }

    @Test func namesNoCompanyForUSBOrReservedSources() throws {
        let usb = try PnPID(bytes: [0x02, 0x6B, 0x1D, 0x46, 0x02, 0x01, 0x00])
        #expect(usb.vendorIDSource == .usbImplementersForum)
        #expect(usb.vendorID == 0x1D6B)
        #expect(usb.vendorName == nil)
        let reserved = try PnPID(bytes: [0x07, 0x4C, 0x00, 0x01, 0x00, 0x00, 0x00])
        #expect(reserved.vendorIDSource == .reserved(7))
        #expect(reserved.vendorName == nil)
        #expect(reserved.description.hasPrefix("reserved source 0x07 vendor 0x004C,"))
    }

    @Test func rejectsMalformedPnPID() {
        let full: [UInt8] = [0x01, 0x0D, 0x00, 0x00, 0x00, 0x10, 0x01]
        for count in 0..<full.count {
            #expect(throws: DecodeError.self) { try PnPID(bytes: Array(full.prefix(count))) }
        }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try PnPID(bytes: full + [0]) }
    }

    @Test func decodesStringsWithReplacement() throws {
        let registry = CharacteristicValueDecoder.standard
        for uuid in CharacteristicValueDecoder.textCharacteristics {
            let decoded = try registry.decode(Array("Nordic".utf8), uuid: uuid)?.get()
            #expect(decoded?.description == "\"Nordic\"", "\(uuid)")
        }
        // Invalid UTF-8 (a lone continuation byte, a truncated sequence) becomes U+FFFD.
        let broken = try registry.decode([0x41, 0x80, 0x42, 0xE2, 0x82], uuid: GATTUUID.deviceName)?.get()
        #expect(broken?.description == "\"A\u{FFFD}B\u{FFFD}\"")
        // A C-string terminator is dropped, an inner NUL kept; empty is the empty string.
        #expect(try registry.decode([0x61, 0x00, 0x62, 0x00, 0x00], uuid: GATTUUID.modelNumberString)?.get().description == "\"a\u{0}b\"")
        #expect(try registry.decode([], uuid: GATTUUID.serialNumberString)?.get().description == "\"\"")
    }

    @Test func decodesAppearance() throws {
        let decoded = try CharacteristicValueDecoder.standard.decode([0xC1, 0x03], uuid: GATTUUID.appearance)?.get()
        guard case .appearance(let appearance) = decoded else { Issue.record("not an appearance"); return }
        #expect(appearance.rawValue == 0x03C1)
        #expect(decoded?.description == "Keyboard (0x03C1)")
        for bytes in [[], [0xC1], [0xC1, 0x03, 0x00]] as [[UInt8]] {
            #expect(throws: DecodeError.self) { try CharacteristicValueDecoder.standard.decode(bytes, uuid: GATTUUID.appearance)?.get() }
        }
    }

    @Test func registryAnswersNilWithoutDecoderOrFormat() throws {
        let registry = CharacteristicValueDecoder.standard
        #expect(registry.decode([1, 2], uuid: BluetoothUUID(UInt16(0x2A2B))) == nil)
        #expect(!registry.canDecode(BluetoothUUID(UInt16(0x2A2B))))
        #expect(registry.canDecode(GATTUUID.batteryLevel))
        // A format makes any characteristic decodable; a decoder of its own still wins.
        let percent = CharacteristicPresentationFormat(format: .uint16, unit: BluetoothUUID(UInt16(0x27AD)))
        #expect(try registry.decode([0x2A, 0x00], uuid: BluetoothUUID(UInt16(0x2A2B)), presentationFormat: percent)?.get().description == "42 %")
        #expect(try registry.decode([0x2A], uuid: GATTUUID.batteryLevel, presentationFormat: percent)?.get().description == "42%")
    }

    @Test func registryTakesProfileDecoders() throws {
        struct Opcode: CustomStringConvertible, Sendable { let raw: UInt8; var description: String { "opcode \(raw)" } }
        var registry = CharacteristicValueDecoder.standard
        registry.register(VendorGATTNames.ancsControlPoint) { bytes throws(DecodeError) in
            var reader = ByteReader(bytes)
            return .custom(Opcode(raw: try reader.readUInt8()))
        }
        #expect(try registry.decode([3], uuid: VendorGATTNames.ancsControlPoint)?.get().description == "opcode 3")
        #expect(throws: DecodeError.self) { try registry.decode([], uuid: VendorGATTNames.ancsControlPoint)?.get() }
        #expect(CharacteristicValueDecoder().decode([3], uuid: GATTUUID.batteryLevel) == nil)
    }

    @Test func decodesDescriptorsThroughTheRegistry() throws {
        let registry = CharacteristicValueDecoder.standard
        #expect(try registry.decode([0x01, 0x00], uuid: GATTUUID.clientCharacteristicConfiguration)?.get().description == "Notifications enabled")
        #expect(try registry.decode(Array("Temperature".utf8), uuid: GATTUUID.characteristicUserDescription)?.get().description == "\"Temperature\"")
        #expect(try registry.decode([0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00], uuid: GATTUUID.characteristicPresentationFormat)?.get().description
            == "sint16, exponent -2, unit Celsius temperature (degree Celsius), namespace Bluetooth SIG, description unknown")
        #expect(try registry.decode([0x01, 0x00], uuid: GATTUUID.characteristicExtendedProperties)?.get().description == "Reliable Write")
    }
}
