import BluetoothCore
import Testing

@Suite struct AdvertisingDataBuilderTests {
    static let ancs = BluetoothUUID("7905F431-B5CE-4E99-A40F-4B1E122D00D0")!

    @Test func iBeaconRoundTrip() throws {
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)
        let payload = adBytes("02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 02 C5")
        builder.manufacturerData(companyID: 0x004C, payload)
        let data = try builder.build()
        #expect(data.bytes == adBytes(
            "02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 02 C5"
        ))
        #expect(data.manufacturerData == [ManufacturerData(companyID: 0x004C, data: payload)])
    }

    @Test func eddystoneRoundTrip() throws {
        var builder = AdvertisingDataBuilder()
        builder.serviceUUIDs([BluetoothUUID(UInt16(0xFEAA))])
        builder.serviceData(BluetoothUUID(UInt16(0xFEAA)), adBytes("10 EE 03 65 78 61 6D 70 6C 65 07"))
        let data = try builder.build()
        #expect(data.bytes == adBytes("03 03 AA FE 0E 16 AA FE 10 EE 03 65 78 61 6D 70 6C 65 07"))
    }

    @Test func ancsSolicitationRoundTrip() throws {
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)
        builder.solicitedServiceUUIDs([Self.ancs])
        let data = try builder.build()
        #expect(data.bytes == adBytes("02 01 06 11 15 D0 00 2D 12 1E 4B 0F A4 99 4E CE B5 31 F4 05 79"))
        #expect(data.solicitedServiceUUIDs == [Self.ancs])
    }

    @Test func everyElementRoundTrips() throws {
        var builder = AdvertisingDataBuilder()
        builder.flags([.leLimitedDiscoverableMode, .brEDRNotSupported])
        builder.serviceUUIDs([BluetoothUUID(UInt16(0x180D)), Self.ancs, BluetoothUUID(UInt32(0x1234_5678))], complete: false)
        builder.serviceUUIDs([BluetoothUUID(UInt16(0x180F))], complete: false)
        builder.solicitedServiceUUIDs([BluetoothUUID(UInt16(0x1812)), BluetoothUUID(UInt32(0xABCD_0001))])
        builder.localName("Sensor")
        builder.txPowerLevel(-8)
        builder.appearance(Appearance(0x0340))
        builder.serviceData(BluetoothUUID(UInt32(0xABCD_0002)), [1])
        builder.serviceData(Self.ancs, [2, 3])
        builder.manufacturerData(companyID: 0xFFFF, [9])
        builder.uri("https://bare.ble/x")
        builder.advertisingInterval(AdvertisingInterval(units: 0x1_0000))
        builder.raw(.leRole, [0x00])
        let data = try builder.build(limit: AdvertisingDataBuilder.extendedFragmentLimit)
        #expect(data.isWellFormed)
        #expect(data.flags == [.leLimitedDiscoverableMode, .brEDRNotSupported])
        #expect(Set(data.serviceUUIDs) == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0x180F)), Self.ancs, BluetoothUUID(UInt32(0x1234_5678))])
        #expect(data.serviceUUIDs.first == BluetoothUUID(UInt16(0x180D)))  // 16-bit list first
        #expect(!data.hasCompleteServiceList)
        #expect(data.all(.incompleteListOf16BitServiceUUIDs).count == 1)  // one list per width
        #expect(data.solicitedServiceUUIDs == [BluetoothUUID(UInt16(0x1812)), BluetoothUUID(UInt32(0xABCD_0001))])
        #expect(data.localName == "Sensor" && data.isLocalNameComplete)
        #expect(data.txPowerLevel == -8)
        #expect(data.appearance?.name == "Generic Heart Rate Sensor")
        #expect(data.serviceData == [
            ServiceData(uuid: BluetoothUUID(UInt32(0xABCD_0002)), data: [1]),
            ServiceData(uuid: Self.ancs, data: [2, 3]),
        ])
        #expect(data.manufacturerData == [ManufacturerData(companyID: 0xFFFF, data: [9])])
        #expect(data.uri == "https://bare.ble/x")
        #expect(data.first(.uri)?.first == 0x17)
        #expect(data.advertisingInterval?.units == 0x1_0000)
        #expect(data.first(.advertisingIntervalLong)?.count == 3)
        #expect(data.first(.leRole) == [0x00][...])
    }

    @Test func singleValuedElementsReplaceInPlace() throws {
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)
        builder.txPowerLevel(0)
        builder.flags(.leLimitedDiscoverableMode)
        #expect(try builder.build().bytes == adBytes("02 01 01 02 0A 00"))
    }

    @Test func overflowNamesTheElementAndTheShortfall() throws {
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)  // 3
        builder.serviceUUIDs([Self.ancs])  // 18 -> 21
        builder.txPowerLevel(4)  // 3 -> 24
        builder.manufacturerData(companyID: 0xFFFF, Array(repeating: 0, count: 8))  // 12 > 7 left
        #expect(throws: AdvertisingDataError.overflow(element: "manufacturer data (0xFFFF)", needed: 12, available: 7, limit: 31)) {
            try builder.build()
        }
        do {
            _ = try builder.build()
        } catch {
            #expect(error.description == "manufacturer data (0xFFFF) needs 12 bytes but only 7 of 31 are left")
        }
        // The brief's example: 5 of 31 left.
        var other = AdvertisingDataBuilder()
        other.raw(ADType(0x42), Array(repeating: 0, count: 24))  // 26
        other.manufacturerData(companyID: 0xFFFF, Array(repeating: 0, count: 8))
        #expect(throws: AdvertisingDataError.overflow(element: "manufacturer data (0xFFFF)", needed: 12, available: 5, limit: 31)) {
            try other.build()
        }
        #expect(AdvertisingDataError.overflow(element: "manufacturer data (0xFFFF)", needed: 12, available: 5, limit: 31).description
            == "manufacturer data (0xFFFF) needs 12 bytes but only 5 of 31 are left")
        // Fits the extended limits.
        #expect(try builder.build(limit: 251).bytes.count == 36)
    }

    @Test func limits31And251And1650() throws {
        var builder = AdvertisingDataBuilder()
        for index in 0..<10 { builder.manufacturerData(companyID: UInt16(index), Array(repeating: 0xAB, count: 150)) }
        // Ten structures of 154 bytes: 1540.
        #expect(throws: AdvertisingDataError.overflow(element: "manufacturer data (0x0000)", needed: 154, available: 31, limit: 31)) {
            try builder.build()
        }
        #expect(throws: AdvertisingDataError.overflow(element: "manufacturer data (0x0001)", needed: 154, available: 97, limit: 251)) {
            try builder.build(limit: 251)
        }
        let big = try builder.build(limit: AdvertisingDataBuilder.extendedLimit)
        #expect(big.bytes.count == 1540)
        #expect(big.manufacturerData.count == 10)
        #expect(big.isWellFormed)
        builder.raw(ADType(0x42), Array(repeating: 0, count: 110))  // 112 > 110 left
        #expect(throws: AdvertisingDataError.overflow(element: "AD type 0x42", needed: 112, available: 110, limit: 1650)) {
            try builder.build(limit: 1650)
        }
        #expect(throws: AdvertisingDataError.invalidLimit(1651)) { try AdvertisingDataBuilder().build(limit: 1651) }
        #expect(throws: AdvertisingDataError.invalidLimit(-1)) { try AdvertisingDataBuilder().build(limit: -1) }
        #expect(try AdvertisingDataBuilder().build(limit: 0) == .empty)
        #expect(try AdvertisingDataBuilder().build() == .empty)
    }

    @Test func structureLongerThan255AndEmptyLists() {
        var long = AdvertisingDataBuilder()
        long.serviceData(BluetoothUUID(UInt16(0xFEAA)), Array(repeating: 0, count: 253))
        #expect(throws: AdvertisingDataError.structureTooLong(element: "service data (FEAA)", length: 255)) {
            try long.build(limit: 1650)
        }
        #expect(AdvertisingDataError.structureTooLong(element: "service data (FEAA)", length: 255).description
            == "service data (FEAA) has 255 bytes of data but an AD structure holds at most 254")
        var exactly = AdvertisingDataBuilder()
        exactly.raw(ADType(0x42), Array(repeating: 0, count: 254))
        #expect((try? exactly.build(limit: 1650))?.bytes.first == 255)
        var empty = AdvertisingDataBuilder()
        empty.serviceUUIDs([])
        #expect(throws: AdvertisingDataError.emptyList(element: "service UUIDs")) { try empty.build() }
        var emptySolicitation = AdvertisingDataBuilder()
        emptySolicitation.solicitedServiceUUIDs([])
        #expect(throws: AdvertisingDataError.emptyList(element: "solicited service UUIDs")) { try emptySolicitation.build() }
        #expect(AdvertisingDataError.emptyList(element: "service UUIDs").description
            == "service UUIDs: the list is empty; leave it out or add an entry")
    }

    @Test func nameTooLongIsAnErrorByDefault() {
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)
        builder.localName("A very long peripheral name indeed")
        #expect(throws: AdvertisingDataError.overflow(element: "complete local name", needed: 36, available: 28, limit: 31)) {
            try builder.build()
        }
    }

    @Test func nameShortenedToFitWhenAsked() throws {
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)
        builder.localName("A very long peripheral name indeed", shortenedNameToFit: true)
        builder.txPowerLevel(0)
        let data = try builder.build()
        #expect(data.bytes.count == 31)
        #expect(data.localName == "A very long peripheral ")  // 23 bytes: 31 - 3 - 3 - 2
        #expect(!data.isLocalNameComplete)
        #expect(data.txPowerLevel == 0)
        // A name that fits stays complete.
        var short = AdvertisingDataBuilder()
        short.localName("Tiny", shortenedNameToFit: true)
        #expect(try short.build().isLocalNameComplete)
        // Never cut inside a character: "é" is two bytes and only one is left.
        var accented = AdvertisingDataBuilder()
        accented.raw(ADType(0x42), Array(repeating: 0, count: 25))  // 27
        accented.localName("aé", shortenedNameToFit: true)  // 2 bytes of room
        #expect(try accented.build().localName == "a")
        // Nothing fits: the complete name overflows and the error names it.
        var full = AdvertisingDataBuilder()
        full.raw(ADType(0x42), Array(repeating: 0, count: 27))  // 29
        full.localName("Name", shortenedNameToFit: true)
        #expect(throws: AdvertisingDataError.overflow(element: "complete local name", needed: 6, available: 2, limit: 31)) {
            try full.build()
        }
        // A name longer than one structure is cut to 254 bytes with extended limits.
        var huge = AdvertisingDataBuilder()
        huge.localName(String(repeating: "n", count: 400), shortenedNameToFit: true)
        #expect(try huge.build(limit: 1650).localName?.count == 254)
        var hugeStrict = AdvertisingDataBuilder()
        hugeStrict.localName(String(repeating: "n", count: 400))
        #expect(throws: AdvertisingDataError.structureTooLong(element: "complete local name", length: 400)) {
            try hugeStrict.build(limit: 1650)
        }
    }

    @Test func advertisingIntervalForms() throws {
        for (units, type, count) in [(UInt32(0x20), ADType.advertisingInterval, 2), (0xFF_FFFF, .advertisingIntervalLong, 3), (0x0100_0000, .advertisingIntervalLong, 4)] {
            var builder = AdvertisingDataBuilder()
            builder.advertisingInterval(AdvertisingInterval(units: units))
            let data = try builder.build()
            #expect(data.first(type)?.count == count)
            #expect(data.advertisingInterval?.units == units)
        }
    }

    @Test func uriWithoutAKnownScheme() throws {
        var builder = AdvertisingDataBuilder()
        builder.uri("foo:bar")
        let data = try builder.build()
        #expect(data.first(.uri).map(Array.init) == [0x01] + Array("foo:bar".utf8))
        #expect(data.uri == "foo:bar")
        #expect(data.isWellFormed)
        var bluetooth = AdvertisingDataBuilder()
        bluetooth.uri("bluetooth:AABB")
        let two = try bluetooth.build()
        #expect(two.first(.uri).map { Array($0.prefix(2)) } == [0xC2, 0xBB])
        #expect(two.uri == "bluetooth:AABB")
    }
}
