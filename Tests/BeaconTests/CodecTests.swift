import Beacon
import BluetoothCore
import Testing

@Suite struct IBeaconCodecTests {
    let uuidText = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test func buildsTheExactPublishedLayout() throws {
        let beacon = try IBeacon(proximityUUID: uuidText, major: 1, minor: 2, measuredPower: -59)
        let expected = Hex.bytes("020106" + "1AFF4C000215" + "E2C56DB5DFFB48D2B060D0F5A71096E0" + "0001" + "0002" + "C5")
        #expect(try beacon.advertisingData().bytes == expected)
    }

    @Test func roundTrips() throws {
        let beacon = try IBeacon(proximityUUID: uuidText, major: 65535, minor: 0, measuredPower: -127)
        let data = AdvertisingData(try beacon.advertisingData().bytes)
        #expect(IBeacon(data) == beacon)
        #expect(IBeacon.decode(data) == .frame(beacon))
        #expect(BeaconFrame.decode(data) == .iBeacon(beacon))
        #expect(beacon.proximityUUID.uuidString128 == uuidText)
    }

    @Test func refusesImpossibleInput() {
        #expect(throws: BeaconEncodingError.invalidProximityUUID("180D")) {
            try IBeacon(proximityUUID: "180D", major: 1, minor: 1, measuredPower: -59)
        }
        #expect(throws: BeaconEncodingError.invalidProximityUUID("not-a-uuid")) {
            try IBeacon(proximityUUID: "not-a-uuid", major: 1, minor: 1, measuredPower: -59)
        }
        #expect(throws: BeaconEncodingError.valueOutOfRange(field: "major", value: 65536, allowed: 0...65535)) {
            try IBeacon(proximityUUID: uuidText, major: 65536, minor: 1, measuredPower: -59)
        }
        #expect(throws: BeaconEncodingError.valueOutOfRange(field: "minor", value: -1, allowed: 0...65535)) {
            try IBeacon(proximityUUID: uuidText, major: 1, minor: -1, measuredPower: -59)
        }
        #expect(throws: BeaconEncodingError.powerOutOfRange(field: "measured power", dBm: 21)) {
            try IBeacon(proximityUUID: uuidText, major: 1, minor: 1, measuredPower: 21)
        }
        #expect(throws: BeaconEncodingError.powerOutOfRange(field: "measured power", dBm: -128)) {
            try IBeacon(proximityUUID: uuidText, major: 1, minor: 1, measuredPower: -128)
        }
        // The unchecked initialiser cannot hold an impossible value past encoding.
        let direct = IBeacon(proximityUUID: BluetoothUUID(high: 1, low: 2), major: 1, minor: 1, measuredPower: 100)
        #expect(throws: BeaconEncodingError.powerOutOfRange(field: "measured power", dBm: 100)) { try direct.advertisingData() }
    }

    @Test func errorsSayWhatToDo() {
        let error = BeaconEncodingError.invalidProximityUUID("xyz")
        #expect(error.description.contains("XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX"))
    }
}

@Suite struct EddystoneCodecTests {
    let namespace: [UInt8] = [0xED, 0xD1, 0xEB, 0xEA, 0xC0, 0x4E, 0x5D, 0xEF, 0xA0, 0x17]
    let instance: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06]

    func roundTrip(_ frame: EddystoneFrame) throws {
        let built = try frame.advertisingData()
        let data = AdvertisingData(built.bytes)
        #expect(data.isWellFormed)
        #expect(EddystoneFrame.decode(data) == .frame(frame))
        #expect(BeaconFrame.decode(data) == .eddystone(frame))
        // The layout of vectors.md: flags, the 16-bit list, then the service data.
        #expect(Array(built.bytes.prefix(9)) == [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(frame.frameBytes.count + 3), 0x16])
    }

    @Test func uidRoundTrips() throws {
        let uid = try EddystoneUID(txPower: -18, namespace: namespace, instance: instance)
        try roundTrip(.uid(uid))
        #expect(uid.frameBytes.count == 20)
        #expect(uid.frameBytes.suffix(2) == [0, 0])
    }

    @Test func uidWithoutReservedOctetsIsAccepted() {
        let frame: [UInt8] = [0x00, 0xEE] + namespace + instance
        #expect(EddystoneFrame.decode(frame: frame).frame == .uid(try! EddystoneUID(txPower: -18, namespace: namespace, instance: instance)))
    }

    @Test(arguments: [
        ("https://www.example.com/", 1, [UInt8]("example".utf8) + [0x00]),
        ("http://www.example.org", 0, [UInt8]("example".utf8) + [0x08]),
        ("http://a.info/b", 2, [UInt8]("a".utf8) + [0x04] + [UInt8]("b".utf8)),
        ("https://goo.gl/S6zT6P", 3, [UInt8]("goo.gl/S6zT6P".utf8)),
        ("https://x.gov", 3, [0x78, 0x0D]),
    ])
    func urlEncodingExamples(url: String, scheme: Int, encoded: [UInt8]) throws {
        let result = try EddystoneURL.encode(url)
        #expect(result.scheme == UInt8(scheme))
        #expect(result.encoded == encoded)
        try roundTrip(.url(try EddystoneURL(txPower: -20, url: url)))
    }

    @Test func urlTooLongNamesTheExcess() throws {
        let url = "https://www.abcdefghijklmnopqrst.com/"  // 20 characters + .com/ = 21 bytes
        #expect(throws: BeaconEncodingError.urlTooLong(url, encodedLength: 21)) { try EddystoneURL(txPower: -20, url: url) }
        do {
            _ = try EddystoneURL(txPower: -20, url: url)
        } catch {
            #expect(error.description.contains("4 too many"))
        }
        // Exactly 17 fits.
        _ = try EddystoneURL(txPower: -20, url: "https://abcdefghijklmnop.com")
    }

    @Test func urlRefusesUnknownSchemesAndCharacters() {
        #expect(throws: BeaconEncodingError.unknownURLScheme("ftp://example.com")) { try EddystoneURL(txPower: -20, url: "ftp://example.com") }
        #expect(throws: BeaconEncodingError.unencodableURLCharacter(" ", url: "https://a b")) { try EddystoneURL(txPower: -20, url: "https://a b") }
        #expect(throws: BeaconEncodingError.unencodableURLCharacter("é", url: "https://é")) { try EddystoneURL(txPower: -20, url: "https://é") }
        #expect(throws: BeaconEncodingError.powerOutOfRange(field: "TX power", dBm: 30)) { try EddystoneURL(txPower: 30, url: "https://a") }
    }

    @Test func tlmRoundTrips() throws {
        let telemetry = EddystoneTLM.Telemetry(batteryVoltage: 3000, temperature: 23.5, advertisingPDUCount: 123_456, timeSincePowerOn: 36_000)
        #expect(telemetry.temperatureRaw == 0x1780)
        #expect(telemetry.temperature == 23.5)
        #expect(telemetry.secondsSincePowerOn == 3600)
        try roundTrip(.tlm(.plain(telemetry)))
        #expect(EddystoneFrame.tlm(.plain(telemetry)).frameBytes == Hex.bytes("2000" + "0BB8" + "1780" + "0001E240" + "00008CA0"))
        let noSensor = EddystoneTLM.Telemetry(batteryVoltage: 0, temperature: nil, advertisingPDUCount: 0, timeSincePowerOn: 0)
        #expect(noSensor.temperatureRaw == 0x8000 && noSensor.temperature == nil)
        let cold = EddystoneTLM.Telemetry(batteryVoltage: 0, temperature: -10.25, advertisingPDUCount: 0, timeSincePowerOn: 0)
        #expect(cold.temperature == -10.25)
    }

    @Test func encryptedTLMIsKeptRaw() throws {
        let frame = EddystoneFrame.tlm(.encrypted(encryptedTelemetry: Array(1...12), salt: 0xABCD, messageIntegrityCheck: 0x1234))
        try roundTrip(frame)
        #expect(frame.frameBytes.count == 18)
        #expect(throws: BeaconEncodingError.wrongIdentifierLength(field: "Eddystone-ETLM encrypted telemetry", expected: 12, actual: 3)) {
            try EddystoneFrame.tlm(.encrypted(encryptedTelemetry: [1, 2, 3], salt: 0, messageIntegrityCheck: 0)).advertisingData()
        }
    }

    @Test func eidRoundTrips() throws {
        try roundTrip(.eid(try EddystoneEID(txPower: -10, ephemeralIdentifier: [1, 2, 3, 4, 5, 6, 7, 8])))
        #expect(throws: BeaconEncodingError.wrongIdentifierLength(field: "Eddystone ephemeral identifier", expected: 8, actual: 7)) {
            try EddystoneEID(txPower: -10, ephemeralIdentifier: [1, 2, 3, 4, 5, 6, 7])
        }
    }

    @Test func identifierLengthsAreChecked() {
        #expect(throws: BeaconEncodingError.wrongIdentifierLength(field: "Eddystone namespace", expected: 10, actual: 9)) {
            try EddystoneUID(txPower: -18, namespace: Array(namespace.prefix(9)), instance: instance)
        }
        #expect(throws: BeaconEncodingError.wrongIdentifierLength(field: "Eddystone instance", expected: 6, actual: 7)) {
            try EddystoneUID(txPower: -18, namespace: namespace, instance: instance + [0])
        }
    }
}

@Suite struct AltBeaconCodecTests {
    @Test func roundTrips() throws {
        let beacon = try AltBeacon(companyID: 0x0118, beaconID: Array(0..<20), referenceRSSI: -59, manufacturerReserved: 0x42)
        let built = try beacon.advertisingData()
        #expect(Array(built.bytes.prefix(9)) == [0x02, 0x01, 0x06, 0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC])
        let data = AdvertisingData(built.bytes)
        #expect(AltBeacon(data) == beacon)
        #expect(BeaconFrame.decode(data) == .altBeacon(beacon))
    }

    @Test func refusesImpossibleInput() {
        #expect(throws: BeaconEncodingError.wrongIdentifierLength(field: "AltBeacon beacon ID", expected: 20, actual: 16)) {
            try AltBeacon(companyID: 0x0118, beaconID: Array(0..<16), referenceRSSI: -59)
        }
        #expect(throws: BeaconEncodingError.powerOutOfRange(field: "reference RSSI", dBm: -200)) {
            try AltBeacon(companyID: 0x0118, beaconID: Array(0..<20), referenceRSSI: -200)
        }
    }
}
