import HCI
import Testing

@Suite struct FeatureTableTests {
    @Test func leFeatureNamesInBitOrder() {
        let features: LEFeatures = [.leCodedPHY, .leEncryption, .le2MPHY, .channelSelectionAlgorithm2, LEFeatures(rawValue: 1 << 50)]
        #expect(features.names == ["LE Encryption", "LE 2M PHY", "LE Coded PHY", "Channel Selection Algorithm #2", "bit 50"])
        #expect(LEFeatures.leDataPacketLengthExtension.rawValue == 1 << 5)
        #expect(LEFeatures.llPrivacy.rawValue == 1 << 6)
        #expect(LEFeatures.leExtendedAdvertising.rawValue == 1 << 12)
        #expect(LEFeatures.lePeriodicAdvertising.rawValue == 1 << 13)
        #expect(LEFeatures.isochronousBroadcaster.rawValue == 1 << 30)
        #expect(LEFeatures.channelSounding.rawValue == 1 << 46)
        #expect(LEFeatures(rawValue: 0).names.isEmpty)
        #expect(LEFeatures(rawValue: .max).names.count == 64)
        #expect(LEFeatures.leEncryption.description == "[LE Encryption]")
    }

    @Test func everyNamedLEBitIsDistinct() {
        let named = LEFeatures.bitNames.keys.sorted()
        #expect(named == Array(0...48) + [63])
    }

    @Test func lmpFeatureNames() {
        let features: LMPFeatures = [.leSupportedController, .brEdrNotSupported, .simultaneousLEAndBREDRController]
        #expect(features.rawValue == 1 << 37 | 1 << 38 | 1 << 49)
        #expect(features.names == [
            "BR/EDR Not Supported", "LE Supported (Controller)",
            "Simultaneous LE and BR/EDR to Same Device Capable (Controller)",
        ])
        #expect(LMPFeatures(rawValue: 1 << 8).names == ["bit 8"])
        #expect(LMPFeatures.extendedFeatures.names == ["Extended features"])
    }

    @Test func versionNames() {
        let expected: [UInt8: String] = [
            0x00: "1.0b", 0x03: "2.0+EDR", 0x05: "3.0+HS", 0x06: "4.0", 0x07: "4.1", 0x08: "4.2", 0x09: "5.0",
            0x0A: "5.1", 0x0B: "5.2", 0x0C: "5.3", 0x0D: "5.4", 0x0E: "6.0",
        ]
        for (number, name) in expected {
            #expect(HCIVersion.name(for: number) == name)
            #expect(LMPVersion(number).description == name)
        }
        #expect(HCIVersion.name(for: 0x20) == "unknown (0x20)")
        #expect(HCIVersion(0xFF).versionName == nil)
        #expect(HCIVersion.v5_4 > HCIVersion.v4_2)
    }
}
