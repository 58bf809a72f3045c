import Beacon
import BluetoothCore
import Testing
import TestSupport

@Suite struct MalformedFrameTests {
    let iBeaconHex = "020106" + "1AFF4C000215" + "E2C56DB5DFFB48D2B060D0F5A71096E0" + "0001" + "0002" + "C5"

    func data(_ hex: String) -> AdvertisingData { AdvertisingData(Hex.bytes(hex) ?? []) }

    /// Service data on 0xFEAA with the service list, around `frame` (hex).
    func eddystone(_ frame: String) -> AdvertisingData {
        let bytes = Hex.bytes(frame) ?? []
        return AdvertisingData([0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(bytes.count + 3), 0x16, 0xAA, 0xFE] + bytes)
    }

    @Test func iBeaconWithWrongLengthOctetIsMalformed() {
        let broken = data(iBeaconHex.replacingFirst("0215", with: "0214"))
        #expect(IBeacon.decode(broken) == .malformed(.wrongLength(frame: "iBeacon length octet", expected: 21...21, actual: 20)))
        #expect(BeaconFrame.decode(broken) == nil)
    }

    @Test func truncatedIBeaconIsMalformed() {
        let bytes = Hex.bytes(iBeaconHex)!
        // Shorten the manufacturer structure by one byte and fix its AD length octet.
        var short = Array(bytes.dropLast())
        short[3] = 0x19
        #expect(IBeacon.decode(AdvertisingData(short)) == .malformed(.wrongLength(frame: "iBeacon", expected: 23...23, actual: 22)))
        // Cut without fixing the AD length: the AD layer drops the structure, so it is
        // simply not there.
        #expect(IBeacon.decode(AdvertisingData(Array(bytes.dropLast()))) == .notThisFormat)
    }

    @Test func appleDataThatIsNotAnIBeaconIsNotThisFormat() {
        // A Continuity "nearby" message (type 0x10) from an iPhone.
        let nearby = data("0201060AFF4C001005031C5B1F73")
        #expect(IBeacon.decode(nearby) == .notThisFormat)
        #expect(BeaconFrame.decode(nearby) == nil)
    }

    @Test func wrongCompanyIsNotThisFormat() {
        let other = data(iBeaconHex.replacingFirst("4C00", with: "4D00"))
        #expect(IBeacon.decode(other) == .notThisFormat)
    }

    @Test func altBeaconWithWrongCodeIsNotThisFormat() throws {
        let beacon = try AltBeacon(companyID: 0x0118, beaconID: Array(0..<20), referenceRSSI: -59)
        var bytes = try beacon.advertisingData().bytes
        bytes[8] = 0xAD
        #expect(AltBeacon.decode(AdvertisingData(bytes)) == .notThisFormat)
        bytes[8] = 0xAC
        bytes.removeLast()
        bytes[3] = 0x1A
        #expect(AltBeacon.decode(AdvertisingData(bytes)) == .malformed(.wrongLength(frame: "AltBeacon", expected: 24...24, actual: 23)))
    }

    @Test func unknownEddystoneFrameTypeIsMalformed() {
        #expect(EddystoneFrame.decode(eddystone("40EE0102")) == .malformed(.unknownEddystoneFrameType(0x40)))
        #expect(BeaconFrame.decode(eddystone("40EE0102")) == nil)
    }

    @Test(arguments: ["00EE0102030405", "10EE", "2000", "200000", "30EE01020304050607", "30EE010203040506070809", "", "2002" + String(repeating: "00", count: 12)])
    func truncatedOrOversizedEddystoneIsMalformed(_ frame: String) {
        let decoded = EddystoneFrame.decode(eddystone(frame))
        #expect(decoded.malformation != nil, "\(frame) -> \(decoded)")
        #expect(decoded.frame == nil)
    }

    @Test func eddystoneURLWithReservedBytesIsMalformed() {
        #expect(EddystoneFrame.decode(eddystone("10EE04" + "61")) == .malformed(.unknownURLScheme(4)))
        #expect(EddystoneFrame.decode(eddystone("10EE03" + "610E")) == .malformed(.invalidURLByte(0x0E, offset: 1)))
        #expect(EddystoneFrame.decode(eddystone("10EE03" + "20")) == .malformed(.invalidURLByte(0x20, offset: 0)))
        #expect(EddystoneFrame.decode(eddystone("10EE03" + "FF")) == .malformed(.invalidURLByte(0xFF, offset: 0)))
    }

    @Test func eddystoneWithoutServiceListIsMalformed() {
        let bytes: [UInt8] = [0x02, 0x01, 0x06, 0x06, 0x16, 0xAA, 0xFE, 0x30, 0xEE] + [UInt8](repeating: 0, count: 0)
        // Fix the length: type + UUID + a 10-byte EID frame.
        let frame: [UInt8] = [0x30, 0xEE, 1, 2, 3, 4, 5, 6, 7, 8]
        let data = AdvertisingData(Array(bytes.prefix(3)) + [UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame)
        #expect(EddystoneFrame.decode(data) == .malformed(.missingEddystoneServiceUUID))
    }

    @Test func malformationsDescribeThemselves() {
        #expect(BeaconMalformation.unknownEddystoneFrameType(0x40).description.contains("0x40"))
        #expect(BeaconMalformation.wrongLength(frame: "iBeacon", expected: 23...23, actual: 22).description == "iBeacon: 22 bytes where the format has 23")
    }

    /// Random bytes, random AD structures, and mutations of every valid frame: no decoder
    /// traps, and nothing decodes that does not re-encode to the same frame bytes.
    @Test func seededRandomAdvertisementsNeverTrapOrFalselyMatch() async throws {
        try await cpuBound {
            var random = SeededRandom(seed: 0xBEAC_0001)
            let seeds: [[UInt8]] = try [
                IBeacon(proximityUUID: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 2, measuredPower: -59).advertisingData().bytes,
                EddystoneFrame.uid(EddystoneUID(txPower: -18, namespace: Array(0..<10), instance: Array(0..<6))).advertisingData().bytes,
                EddystoneFrame.url(EddystoneURL(txPower: -18, url: "https://www.example.com/")).advertisingData().bytes,
                EddystoneFrame.tlm(.plain(.init(batteryVoltage: 3000, temperatureRaw: 0x1780, advertisingPDUCount: 5, timeSincePowerOn: 9))).advertisingData().bytes,
                EddystoneFrame.eid(EddystoneEID(txPower: -18, ephemeralIdentifier: Array(0..<8))).advertisingData().bytes,
                AltBeacon(companyID: 0x0118, beaconID: Array(0..<20), referenceRSSI: -59).advertisingData().bytes,
            ]
            var decodedCount = 0
            for iteration in 0..<120_000 {
                await yieldPeriodically(iteration: iteration)
                var bytes: [UInt8]
                switch iteration % 4 {
                case 0:
                    bytes = random.bytes(lengths: 0...31)
                case 1:
                    // Structures with beacon-looking headers and random bodies.
                    bytes = []
                    while bytes.count < 28 {
                        let body = random.bytes(lengths: 0...26)
                        let header: [UInt8] = [[0xFF, 0x4C, 0x00, 0x02, 0x15], [0x16, 0xAA, 0xFE], [0x03, 0xAA, 0xFE], [0xFF, 0x18, 0x01, 0xBE, 0xAC]][Int.random(in: 0...3, using: &random)]
                        let content = header + body
                        bytes += [UInt8(min(content.count, 255))] + content
                    }
                default:
                    // A valid frame with a few bytes flipped, cut or extended.
                    bytes = seeds[Int.random(in: 0..<seeds.count, using: &random)]
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        let index = Int.random(in: 0..<bytes.count, using: &random)
                        bytes[index] = UInt8.random(in: 0...255, using: &random)
                    }
                    if Bool.random(using: &random) { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random))) }
                    if Bool.random(using: &random) { bytes += random.bytes(lengths: 1...4) }
                }
                let data = AdvertisingData(bytes)
                _ = IBeacon.decode(data)
                _ = AltBeacon.decode(data)
                _ = EddystoneFrame.decode(data)
                guard let frame = BeaconFrame.decode(data) else { continue }
                decodedCount += 1
                // No false match: the decoded frame's own encoding is in the input.
                switch frame {
                case let .iBeacon(beacon):
                    #expect(data.manufacturerData.contains(ManufacturerData(companyID: 0x004C, data: beacon.manufacturerPayload)))
                case let .altBeacon(beacon):
                    #expect(data.manufacturerData.contains(ManufacturerData(companyID: beacon.companyID, data: beacon.manufacturerPayload)))
                case let .eddystone(eddystone):
                    let encoded = eddystone.frameBytes
                    #expect(data.serviceData.contains { $0.uuid == EddystoneFrame.serviceUUID && ($0.data == encoded || Self.sameUID($0.data, encoded)) })
                    #expect(data.serviceUUIDs.contains(EddystoneFrame.serviceUUID))
                }
            }
            #expect(decodedCount > 1000)
        }
    }

    /// A UID frame's reserved octets are not kept, so compare without them.
    static func sameUID(_ received: [UInt8], _ encoded: [UInt8]) -> Bool {
        received.first == 0x00 && received.prefix(18) == encoded.prefix(18)
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
