import BluetoothCore
import Testing

/// Bytes from hex text; the tests' inputs are written as a sniffer would print them.
func adBytes(_ text: String) -> [UInt8] {
    guard let bytes = Hex.bytes(text) else { preconditionFailure("bad hex in test: \(text)") }
    return bytes
}

@Suite struct AdvertisingDataParsingTests {
    static let ancs = BluetoothUUID("7905F431-B5CE-4E99-A40F-4B1E122D00D0")!
    static let beaconUUID = BluetoothUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func iBeacon() throws {
        let data = AdvertisingData(adBytes(
            "02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 02 C5"
        ))
        #expect(data.bytes.count == 30)
        #expect(data.isWellFormed)
        #expect(data.flags == [.leGeneralDiscoverableMode, .brEDRNotSupported])
        let apple = try #require(data.manufacturerData.first)
        #expect(data.manufacturerData.count == 1)
        #expect(apple.companyID == 0x004C)
        #expect(apple.companyName == "Apple, Inc.")
        #expect(apple.data.count == 23)
        #expect(Array(apple.data.prefix(2)) == [0x02, 0x15])
        // The proximity UUID is big-endian inside Apple's payload.
        #expect(Hex.string(apple.data[2..<18]) == "E2C56DB5DFFB48D2B060D0F5A71096E0")
        #expect(apple.data[18] == 0x00 && apple.data[19] == 0x01)  // major 1
        #expect(apple.data[20] == 0x00 && apple.data[21] == 0x02)  // minor 2
        #expect(Int8(bitPattern: apple.data[22]) == -59)  // measured power
        #expect(data.localName == nil)
        #expect(data.serviceUUIDs.isEmpty)
        #expect(Array(data.structures.map(\.type)) == [.flags, .manufacturerSpecificData])
    }

    @Test func eddystoneURL() throws {
        let data = AdvertisingData(adBytes("03 03 AA FE 0E 16 AA FE 10 EE 03 65 78 61 6D 70 6C 65 07"))
        #expect(data.isWellFormed)
        #expect(data.serviceUUIDs == [BluetoothUUID(UInt16(0xFEAA))])
        #expect(data.hasCompleteServiceList)
        let frame = try #require(data.serviceData.first)
        #expect(frame.uuid == BluetoothUUID(UInt16(0xFEAA)))
        #expect(frame.data == adBytes("10 EE 03 65 78 61 6D 70 6C 65 07"))
    }

    @Test func ancsSolicitation() {
        let data = AdvertisingData(adBytes("02 01 06 11 15 D0 00 2D 12 1E 4B 0F A4 99 4E CE B5 31 F4 05 79"))
        #expect(data.isWellFormed)
        #expect(data.solicitedServiceUUIDs == [Self.ancs])
        #expect(data.serviceUUIDs.isEmpty)
    }

    @Test func serviceUUIDListsOfEveryWidthInOrder() {
        let data = AdvertisingData(adBytes(
            "05 02 0D 18 0F 18  05 05 78 56 34 12  11 07 D0 00 2D 12 1E 4B 0F A4 99 4E CE B5 31 F4 05 79  03 03 0A 18"
        ))
        #expect(data.isWellFormed)
        #expect(data.serviceUUIDs == [
            BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0x180F)),
            BluetoothUUID(UInt32(0x1234_5678)), Self.ancs, BluetoothUUID(UInt16(0x180A)),
        ])
        // One list is incomplete, so the peer did not claim to list everything.
        #expect(!data.hasCompleteServiceList)
        #expect(!AdvertisingData(adBytes("02 01 06")).hasCompleteServiceList)
        #expect(!AdvertisingData(adBytes("03 02 0D 18")).hasCompleteServiceList)
        #expect(AdvertisingData(adBytes("05 05 0D 18 00 00")).hasCompleteServiceList)
    }

    @Test func localNames() {
        let complete = AdvertisingData(adBytes("05 08 54 68 65 72  0C 09 54 68 65 72 6D 6F 6D 65 74 65 72"))
        #expect(complete.localName == "Thermometer")
        #expect(complete.isLocalNameComplete)
        let shortened = AdvertisingData(adBytes("05 08 54 68 65 72"))
        #expect(shortened.localName == "Ther")
        #expect(!shortened.isLocalNameComplete)
        #expect(AdvertisingData(adBytes("01 09")).localName == "")
        #expect(AdvertisingData.empty.localName == nil)
        #expect(AdvertisingData(adBytes("07 09 63 61 66 C3 A9 21")).localName == "café!")
    }

    @Test func txPowerAppearanceAndClassOfDevice() {
        let data = AdvertisingData(adBytes("02 0A F4  03 19 C1 03  04 0D 04 05 20"))
        #expect(data.isWellFormed)
        #expect(data.txPowerLevel == -12)
        #expect(data.appearance == Appearance(0x03C1))
        #expect(data.appearance?.name == "Keyboard")
        #expect(data.first(.classOfDevice) == adBytes("04 05 20")[...])
    }

    @Test func targetAddresses() {
        let data = AdvertisingData(adBytes(
            "0D 17 66 55 44 33 22 11 01 00 00 00 00 C0  07 18 06 05 04 03 02 C2"
        ))
        #expect(data.isWellFormed)
        #expect(data.publicTargetAddresses == [BluetoothAddress("11:22:33:44:55:66")!, BluetoothAddress("C0:00:00:00:00:01")!])
        #expect(data.randomTargetAddresses == [BluetoothAddress("C2:02:03:04:05:06")!])
    }

    @Test func advertisingIntervals() {
        #expect(AdvertisingData(adBytes("03 1A A0 00")).advertisingInterval == AdvertisingInterval(units: 160))
        #expect(AdvertisingData(adBytes("03 1A A0 00")).advertisingInterval?.milliseconds == 100)
        #expect(AdvertisingData(adBytes("04 2F 00 00 01")).advertisingInterval?.units == 0x01_0000)
        #expect(AdvertisingData(adBytes("05 2F 00 00 00 01")).advertisingInterval?.units == 0x0100_0000)
        // Wrong lengths are not intervals; the next good one is.
        let mixed = AdvertisingData(adBytes("02 1A A0  06 2F 01 02 03 04 05  03 1A 20 00"))
        #expect(mixed.advertisingInterval?.units == 0x20)
        #expect(mixed.malformations.map(\.offset) == [0, 3])
    }

    @Test func leDeviceAddressRoleFeaturesAndIntervalRange() throws {
        let data = AdvertisingData(adBytes(
            "08 1B 06 05 04 03 02 C1 01  02 1C 02  05 27 FF 01 00 00  05 12 06 00 80 0C"
        ))
        #expect(data.isWellFormed)
        #expect(data.leBluetoothDeviceAddress == DeviceAddress(BluetoothAddress("C1:02:03:04:05:06")!, type: .random))
        #expect(data.first(.leRole) == [0x02][...])
        #expect(data.leSupportedFeatures == [0xFF, 0x01, 0x00, 0x00])
        let range = try #require(data.peripheralConnectionIntervalRange)
        #expect(range.minimum == 6 && range.maximum == 0x0C80)
    }

    @Test func uriWithSchemeCode() {
        // U+0017 is "https:".
        let data = AdvertisingData(adBytes("12 24 17 2F 2F 65 78 61 6D 70 6C 65 2E 63 6F 6D 2F 61 62"))
        #expect(data.isWellFormed)
        #expect(data.uri == "https://example.com/ab")
        // U+0001: no scheme compressed.
        #expect(AdvertisingData(adBytes("06 24 01 61 3A 2F 62")).uri == "a:/b")
        // A code from U+0080 takes two UTF-8 octets: U+00BB is "bluetooth:".
        #expect(AdvertisingData(adBytes("05 24 C2 BB 2F 2F")).uri == "bluetooth://")
    }

    @Test func broadcastNameServiceData32And128AndEncryptedData() throws {
        let data = AdvertisingData(adBytes(
            "07 30 41 75 72 61 63 61  07 20 78 56 34 12 AA BB  12 21 D0 00 2D 12 1E 4B 0F A4 99 4E CE B5 31 F4 05 79 01"
            + "  0B 31 01 02 03 04 05 EE 0A 0B 0C 0D"
        ))
        #expect(data.isWellFormed)
        #expect(data.broadcastName == "Auraca")
        #expect(data.serviceData == [
            ServiceData(uuid: BluetoothUUID(UInt32(0x1234_5678)), data: [0xAA, 0xBB]),
            ServiceData(uuid: Self.ancs, data: [0x01]),
        ])
        #expect(data.first(.encryptedAdvertisingData)?.count == 10)
    }

    @Test func firstAndAllAndUnknownTypes() {
        let data = AdvertisingData(adBytes("03 42 01 02  02 FF 01  03 42 03 04  01 43"))
        #expect(data.first(ADType(0x42)) == [0x01, 0x02][...])
        #expect(data.all(ADType(0x42)).map(Array.init) == [[0x01, 0x02], [0x03, 0x04]])
        #expect(data.first(ADType(0x43))?.isEmpty == true)  // length 1: a type with empty data
        #expect(data.first(.flags) == nil)
        #expect(data.manufacturerData.isEmpty)  // 1 byte: no company identifier
        #expect(ADType(0x42).name == nil)
        #expect(ADType(0x42).description == "AD type 0x42")
        #expect(ADType.flags.description == "Flags (0x01)")
    }

    @Test func flagsOfAnyLength() {
        #expect(AdvertisingData(adBytes("01 01")).flags == [])
        #expect(AdvertisingData(adBytes("03 01 05 00")).flags == [.leLimitedDiscoverableMode, .brEDRNotSupported])
        #expect(AdvertisingData(adBytes("01 01")).isWellFormed)
        #expect(ADFlags(rawValue: 0x1A).description == "[LE General Discoverable, LE and BR/EDR (Controller), LE and BR/EDR (Host)]")
    }

    @Test func mergesAdvertisingAndScanResponse() {
        let advertising = AdvertisingData(adBytes("02 01 06 03 03 0D 18 00 00"))
        let scanResponse = AdvertisingData(adBytes("05 09 4E 61 6D 65 03 03 0F 18"))
        let merged = AdvertisingData.merged(advertising: advertising, scanResponse: scanResponse)
        // Padding in the advertising part would otherwise hide the scan response.
        #expect(merged.bytes == adBytes("02 01 06 03 03 0D 18 05 09 4E 61 6D 65 03 03 0F 18"))
        #expect(merged.localName == "Name")
        #expect(merged.flags == .generalDiscoverableLEOnly)
        #expect(merged.serviceUUIDs == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0x180F))])
        #expect(AdvertisingData.merged(advertising: advertising, scanResponse: .empty) == advertising)
        // A truncated advertising tail is dropped rather than swallowing the scan response.
        let truncated = AdvertisingData(adBytes("02 01 06 09 FF"))
        #expect(AdvertisingData.merged(advertising: truncated, scanResponse: scanResponse).localName == "Name")
    }

    @Test func equalityAndDescription() {
        #expect(AdvertisingData(adBytes("02 01 06")) == AdvertisingData(adBytes("02 01 06")))
        #expect(AdvertisingData(adBytes("02 01 06")) != AdvertisingData(adBytes("02 01 06 00")))
        #expect(AdvertisingData(adBytes("02 01 06 03 03 0D 18 00 00")).description == "020106 03030D18 0000")
    }
}
