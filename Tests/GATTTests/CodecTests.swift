import BluetoothCore
import GATT
import TestSupport
import Testing

@Suite struct CodecTests {
    @Test func namesPropertiesLeastSignificantFirst() {
        #expect(CharacteristicProperties([.read, .notify]).description == "Read, Notify")
        #expect(CharacteristicProperties(rawValue: 0).description == "None")
        #expect(CharacteristicProperties(rawValue: 0xFF).names == [
            "Broadcast", "Read", "Write Without Response", "Write", "Notify", "Indicate",
            "Authenticated Signed Writes", "Extended Properties",
        ])
    }

    @Test func decodesDeclarationWith16BitUUID() throws {
        // Read | Notify, value handle 0x0003, Heart Rate Measurement.
        let declaration = try CharacteristicDeclaration(bytes: [0x12, 0x03, 0x00, 0x37, 0x2A])
        #expect(declaration.properties == [.read, .notify])
        #expect(declaration.valueHandle == 0x0003)
        #expect(declaration.uuid == GATTUUID.heartRateMeasurement)
        #expect(declaration.description == "2A37 (Heart Rate Measurement), value handle 0x0003, properties: Read, Notify")
    }

    @Test func decodesDeclarationWith128BitUUID() throws {
        let bytes: [UInt8] = [0x10, 0x21, 0x00] + VendorGATTNames.ancsNotificationSource.littleEndianBytes128
        let declaration = try CharacteristicDeclaration(bytes: bytes)
        #expect(declaration.uuid == VendorGATTNames.ancsNotificationSource)
        #expect(declaration.valueHandle == 0x0021)
        #expect(declaration.bytes == bytes)
    }

    @Test func roundTripsDeclarations() throws {
        var random = SeededRandom(seed: 0x2803)
        for _ in 0..<2_000 {
            let uuid: BluetoothUUID = Bool.random(using: &random)
                ? BluetoothUUID(UInt16.random(in: 0...0xFFFF, using: &random))
                : BluetoothUUID(high: random.next(), low: random.next())
            let declaration = CharacteristicDeclaration(
                properties: CharacteristicProperties(rawValue: UInt8.random(in: 0...255, using: &random)),
                valueHandle: UInt16.random(in: 1...0xFFFF, using: &random), uuid: uuid)
            #expect(try CharacteristicDeclaration(bytes: declaration.bytes) == declaration)
        }
    }

    @Test func sends32BitUUIDsIn128BitForm() throws {
        let uuid = BluetoothUUID(UInt32(0x1234_5678))
        let declaration = CharacteristicDeclaration(properties: .read, valueHandle: 9, uuid: uuid)
        #expect(declaration.bytes.count == 19)
        #expect(try CharacteristicDeclaration(bytes: declaration.bytes).uuid == uuid)
    }

    @Test func rejectsMalformedDeclarations() {
        for count in [0, 1, 2, 3, 4, 6, 7, 18, 20, 40] {
            #expect(throws: DecodeError.self, "\(count) bytes") {
                try CharacteristicDeclaration(bytes: [UInt8](repeating: 1, count: count))
            }
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 5, actual: 4)) {
            try CharacteristicDeclaration(bytes: [0x02, 0x03, 0x00, 0x37])
        }
        #expect(throws: DecodeError.invalidValue(field: "Characteristic Value Handle", value: 0)) {
            try CharacteristicDeclaration(bytes: [0x02, 0x00, 0x00, 0x37, 0x2A])
        }
    }

    @Test func codesClientCharacteristicConfiguration() throws {
        #expect(try ClientCharacteristicConfiguration(bytes: [0x01, 0x00]) == .notification)
        #expect(try ClientCharacteristicConfiguration(bytes: [0x02, 0x00]) == .indication)
        #expect(try ClientCharacteristicConfiguration(bytes: [0x00, 0x00]) == [])
        #expect(ClientCharacteristicConfiguration.notification.bytes == [0x01, 0x00])
        #expect(ClientCharacteristicConfiguration([.notification, .indication]).description == "Notifications and indications enabled")
        #expect(ClientCharacteristicConfiguration([]).description == "Notifications and indications disabled")
        // Reserved bits survive and are shown.
        let odd = try ClientCharacteristicConfiguration(bytes: [0x05, 0x80])
        #expect(odd.rawValue == 0x8005)
        #expect(odd.description == "Notifications enabled, reserved bits 0x8004")
        for raw in UInt16.min...UInt16.max {
            let value = ClientCharacteristicConfiguration(rawValue: raw)
            #expect(try ClientCharacteristicConfiguration(bytes: value.bytes) == value)
        }
        for bytes in [[], [0x01], [0x01, 0x00, 0x00]] as [[UInt8]] {
            #expect(throws: DecodeError.self) { try ClientCharacteristicConfiguration(bytes: bytes) }
        }
    }

    @Test func codesExtendedProperties() throws {
        let value = try CharacteristicExtendedProperties(bytes: [0x03, 0x00])
        #expect(value == [.reliableWrite, .writableAuxiliaries])
        #expect(value.description == "Reliable Write, Writable Auxiliaries")
        #expect(value.bytes == [0x03, 0x00])
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try CharacteristicExtendedProperties(bytes: [0x01]) }
    }
}

/// The text form of a database, as the facade's cache directory keeps it.
@Suite struct DatabaseTextTests {
    static let database: GATTDatabase = {
        let uuid128 = BluetoothUUID("B4AE0001-7E57-4BA2-B1E0-00000000C0DE")!
        var service = GATTDatabase.Service(uuid: uuid128, handles: 0x0020...0x0034)
        service.includes = [.init(handle: 0x0021, serviceHandles: 0x0019...0x001B, uuid: BluetoothUUID(UInt16(0x1804)))]
        service.characteristics = [
            .init(handle: 0x0023, properties: [.read, .notify], valueHandle: 0x0024, uuid: BluetoothUUID(UInt16(0x2A19)), endHandle: 0x0034,
                  descriptors: [.init(handle: 0x0025, uuid: BluetoothUUID(UInt16(0x2901))), .init(handle: 0x0026, uuid: BluetoothUUID(UInt16(0x2902)))]),
        ]
        let secondary = GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x1804)), handles: 0x0019...0x001B, isPrimary: false)
        return GATTDatabase(services: [service, secondary], databaseHash: Array(0..<16))
    }()

    @Test func roundTrips() {
        let text = Self.database.text
        #expect(text.hasPrefix("gatt-database 1\nhash 000102030405060708090A0B0C0D0E0F\nservice 0019 001B secondary 1804\n"))
        #expect(GATTDatabase(text: text) == Self.database)
        #expect(GATTDatabase(text: GATTDatabase().text) == GATTDatabase())
    }

    @Test func anythingElseIsNil() {
        let good = Self.database.text
        var lines = good.split(separator: "\n").map(String.init)
        #expect(GATTDatabase(text: "") == nil)
        #expect(GATTDatabase(text: "gatt-database 2\n") == nil)
        #expect(GATTDatabase(text: String(good.dropLast(9))) == nil)  // a cut UUID
        // Every single-line damage: a dropped field, a bad handle, a reversed range.
        for index in lines.indices.dropFirst() {
            var damaged = lines
            damaged[index] = String(lines[index].split(separator: " ").dropLast().joined(separator: " "))
            #expect(GATTDatabase(text: damaged.joined(separator: "\n")) == nil, "\(damaged[index])")
            damaged[index] = lines[index].replacing("00", with: "ZZ", maxReplacements: 1)
            #expect(GATTDatabase(text: damaged.joined(separator: "\n")) == nil, "\(damaged[index])")
        }
        lines[2] = "service 0034 0020 secondary 1804"
        #expect(GATTDatabase(text: lines.joined(separator: "\n")) == nil)
        #expect(GATTDatabase(text: "gatt-database 1\ndescriptor 0001 2902\n") == nil)
        // Lines that each read well but together break the discovery rules.
        for (line, replacement) in [
            ("service 0019 001B secondary 1804", "service 0019 0020 secondary 1804"),  // overlaps the primary
            ("characteristic 0023 12 0024 0034 2A19", "characteristic 0023 12 0025 0034 2A19"),  // value not right after
            ("characteristic 0023 12 0024 0034 2A19", "characteristic 0023 12 0024 0025 2A19"),  // ends before its descriptor, and before its service
            ("descriptor 0026 2902", "descriptor 0026 2803"),  // a declaration as a descriptor
            ("descriptor 0026 2902", "descriptor 0025 2902"),  // the same handle twice
            ("include 0021 0019 001B 1804", "include 0021 0019 001B 180F"),  // names the secondary by another UUID
        ] {
            let damaged = good.replacing(line, with: replacement)
            #expect(damaged != good, "\(line)")
            #expect(GATTDatabase(text: damaged) == nil, "\(replacement)")
        }
        var random = SeededRandom(seed: 4)
        for _ in 0..<2000 {
            var text = Array(good.utf8)
            for _ in 0..<3 { text[Int.random(in: 0..<text.count, using: &random)] = UInt8.random(in: 0...127, using: &random) }
            _ = GATTDatabase(text: String(decoding: text, as: UTF8.self))
        }
    }
}
