import BluetoothCore
import Testing

@Suite struct AdvertisingDataNamesTests {
    @Test func appearanceFields() {
        let keyboard = Appearance(0x03C1)
        #expect(keyboard.value == 0x03C1)
        #expect(keyboard.category == 15)
        #expect(keyboard.subcategory == 1)
        #expect(keyboard.categoryName == "Human Interface Device")
        #expect(keyboard.subcategoryName == "Keyboard")
        #expect(keyboard.name == "Keyboard")
        #expect(Appearance(category: 15, subcategory: 1) == keyboard)
    }

    @Test(arguments: [
        (UInt16(0x0000), "Unknown"),
        (0x0340, "Generic Heart Rate Sensor"),
        (0x0341, "Heart Rate Belt"),
        (0x0040, "Generic Phone"),
        (0x0080, "Generic Computer"),
        (0x0083, "Laptop"),
        (0x00C2, "Smartwatch"),
        (0x03C2, "Mouse"),
        (0x0941, "Earbud"),
        (0x0C41, "Fingertip Pulse Oximeter"),
        (0x1441, "Location Display"),
        (0x1481, "Torque Testing Device"),
        (0x0045, "Phone (subcategory 0x05)"),
        (0xFFC0, "Reserved (0xFFC0)"),
    ])
    func appearanceNames(value: UInt16, name: String) {
        #expect(Appearance(value).name == name)
    }

    @Test func appearanceTableIsComplete() {
        let all = Appearance.allAssigned
        #expect(Set(all.map(\.category)).count == 54)
        #expect(all.count == Set(all).count)
        #expect(all.allSatisfy { $0.categoryName != nil })
        #expect(all.filter { $0.subcategory != 0 }.allSatisfy { $0.subcategoryName != nil })
    }

    @Test(arguments: [
        (UInt32(0x01), ""), (0x02, "aaa:"), (0x16, "http:"), (0x17, "https:"), (0x26, "mailto:"),
        (0x45, "tel:"), (0x58, "z39.50s:"), (0xBB, "bluetooth:"), (0xBC, "bl:"),
    ])
    func uriSchemeNames(code: UInt32, name: String) {
        #expect(URIScheme.name(for: code) == name)
        if code != URIScheme.noScheme { #expect(URIScheme.code(for: name) == code) }
    }

    @Test func uriSchemeUnassignedAndCompression() {
        #expect(URIScheme.name(for: 0x00) == nil)
        #expect(URIScheme.name(for: 0xBD) == nil)
        #expect(URIScheme.code(for: "HTTPS:") == 0x17)
        #expect(URIScheme.compress("https://a.b") == [0x17] + Array("//a.b".utf8))
        #expect(URIScheme.compress("nope") == [0x01] + Array("nope".utf8))
        #expect(URIScheme.expand([0x16, 0x2F, 0x2F, 0x78][...]) == "http://x")
        #expect(URIScheme.expand([][...]) == nil)
    }

    @Test func adTypeNamesForEveryAssignedType() {
        let assigned: [UInt8] = Array(0x01...0x0A) + [0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12] + Array(0x14...0x32) + [0x34, 0x3D, 0xFF]
        for raw in assigned {
            #expect(ADType(raw).name != nil, "0x\(Hex.string([raw]))")
        }
        for raw in [UInt8(0x00), 0x0B, 0x0C, 0x13, 0x33, 0x3C, 0xFE] {
            #expect(ADType(raw).name == nil)
        }
        #expect(ADType.uri.name == "URI")
        #expect(ADType.advertisingIntervalLong.name == "Advertising Interval - long")
        #expect(ADType.manufacturerSpecificData.description == "Manufacturer Specific Data (0xFF)")
    }
}
