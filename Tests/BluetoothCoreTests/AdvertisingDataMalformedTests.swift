import BluetoothCore
import Testing
import TestSupport

@Suite struct AdvertisingDataMalformedTests {
    @Test func emptyInput() {
        let data = AdvertisingData([])
        #expect(data.isWellFormed)
        #expect(Array(data.structures).isEmpty)
        #expect(data.flags == nil && data.localName == nil && data.serviceUUIDs.isEmpty)
        #expect(data == .empty)
    }

    @Test func lengthPastTheEndKeepsWhatCameBefore() {
        let data = AdvertisingData(adBytes("02 01 06 05 09 41 42"))
        #expect(data.flags == .generalDiscoverableLEOnly)
        #expect(data.localName == nil)
        #expect(data.malformations == [
            ADMalformation(offset: 3, type: nil, reason: .structureRunsPastEnd(declaredLength: 5, available: 3)),
        ])
        #expect(data.malformations[0].description == "offset 3: length 5 runs past the end (3 byte(s) follow the length octet)")
        // A lone length octet at the end.
        #expect(AdvertisingData(adBytes("02 01 06 1F")).malformations.map(\.reason)
            == [.structureRunsPastEnd(declaredLength: 31, available: 0)])
    }

    @Test func zeroLengthPaddingIsFine() {
        let data = AdvertisingData(adBytes("02 01 06 00 00 00 00"))
        #expect(data.isWellFormed)
        #expect(data.hasPadding)
        #expect(Array(data.structures).count == 1)
        #expect(AdvertisingData(adBytes("00")).isWellFormed)
    }

    @Test func nonZeroBytesAfterTerminatorAreIgnoredAndReported() {
        let data = AdvertisingData(adBytes("02 01 06 00 05 09 41 42 43 44 00"))
        #expect(data.localName == nil)
        #expect(data.flags == .generalDiscoverableLEOnly)
        #expect(data.malformations == [ADMalformation(offset: 3, type: nil, reason: .nonZeroAfterTerminator(count: 6))])
    }

    @Test func truncatedUUIDListsKeepWholeUUIDs() {
        let data16 = AdvertisingData(adBytes("04 03 0D 18 0F"))
        #expect(data16.serviceUUIDs == [BluetoothUUID(UInt16(0x180D))])
        #expect(data16.malformations == [
            ADMalformation(offset: 0, type: .completeListOf16BitServiceUUIDs, reason: .partialElement(elementSize: 2, leftover: 1)),
        ])
        let data32 = AdvertisingData(adBytes("07 05 78 56 34 12 01 02"))
        #expect(data32.serviceUUIDs == [BluetoothUUID(UInt32(0x1234_5678))])
        #expect(data32.malformations.map(\.reason) == [.partialElement(elementSize: 4, leftover: 2)])
        let data128 = AdvertisingData(adBytes("10 06 D0 00 2D 12 1E 4B 0F A4 99 4E CE B5 31 F4 05"))
        #expect(data128.serviceUUIDs.isEmpty)
        #expect(data128.malformations.map(\.reason) == [.partialElement(elementSize: 16, leftover: 15)])
        let solicitation = AdvertisingData(adBytes("04 14 0D 18 0F"))
        #expect(solicitation.solicitedServiceUUIDs == [BluetoothUUID(UInt16(0x180D))])
        #expect(!solicitation.isWellFormed)
    }

    @Test func txPowerOfWrongLength() {
        for text in ["01 0A", "03 0A F4 00"] {
            let data = AdvertisingData(adBytes(text))
            #expect(data.txPowerLevel == nil)
            #expect(data.malformations.map(\.reason) == [.wrongLength(expected: 1...1, actual: data.bytes.count - 2)])
        }
        #expect(AdvertisingData(adBytes("03 0A F4 00")).malformations[0].description
            == "offset 0, Tx Power Level (0x0A): data is 2 byte(s), must be 1")
    }

    @Test func serviceDataShorterThanItsUUID() {
        let cases: [(String, Int, Int)] = [("02 16 AA", 2, 1), ("04 20 01 02 03", 4, 3), ("10 21" + String(repeating: " 00", count: 15), 16, 15)]
        for (text, minimum, actual) in cases {
            let data = AdvertisingData(adBytes(text))
            #expect(data.serviceData.isEmpty)
            #expect(data.malformations.map(\.reason) == [.tooShort(minimum: minimum, actual: actual)])
        }
        // Exactly the UUID: valid, with empty data.
        #expect(AdvertisingData(adBytes("03 16 AA FE")).serviceData == [ServiceData(uuid: BluetoothUUID(UInt16(0xFEAA)), data: [])])
    }

    @Test func manufacturerDataOfZeroOrOneBytes() {
        for text in ["01 FF", "02 FF 4C"] {
            let data = AdvertisingData(adBytes(text + " 02 01 06"))
            #expect(data.manufacturerData.isEmpty)
            #expect(data.flags == .generalDiscoverableLEOnly)
            #expect(data.malformations.map(\.reason) == [.tooShort(minimum: 2, actual: data.bytes.count - 5)])
        }
        #expect(AdvertisingData(adBytes("03 FF FF FF")).manufacturerData == [ManufacturerData(companyID: 0xFFFF, data: [])])
    }

    @Test func invalidUTF8NamesDecodeWithReplacement() {
        let data = AdvertisingData(adBytes("06 09 41 FF 42 C3 28"))
        #expect(data.localName == "A\u{FFFD}B\u{FFFD}(")
        #expect(data.malformations == [ADMalformation(offset: 0, type: .completeLocalName, reason: .invalidUTF8)])
        // A name cut in the middle of a code point, as careless shortening does.
        #expect(AdvertisingData(adBytes("04 08 63 61 C3")).localName == "ca\u{FFFD}")
        #expect(AdvertisingData(adBytes("04 30 FE FE FE")).broadcastName == "\u{FFFD}\u{FFFD}\u{FFFD}")
    }

    @Test func malformedURIs() {
        let empty = AdvertisingData(adBytes("01 24"))
        #expect(empty.uri == nil)
        #expect(empty.malformations.map(\.reason) == [.missingURIScheme])
        let unassigned = AdvertisingData(adBytes("05 24 C2 BD 61 62"))
        #expect(unassigned.uri == "ab")
        #expect(unassigned.malformations.map(\.reason) == [.unassignedURIScheme(0xBD)])
        #expect(unassigned.malformations.first?.reason.description == "URI scheme code point U+00BD is unassigned")
        #expect(AdvertisingData(adBytes("04 24 00 61 62")).malformations.map(\.reason) == [.unassignedURIScheme(0)])
        let broken = AdvertisingData(adBytes("03 24 17 FF"))
        #expect(broken.uri == "https:\u{FFFD}")
        #expect(broken.malformations.map(\.reason) == [.invalidUTF8])
    }

    @Test func otherFixedLengthTypes() {
        let data = AdvertisingData(adBytes("02 19 C1  04 1B 01 02 03  02 2F 01  05 17 01 02 03 04"))
        #expect(data.appearance == nil)
        #expect(data.leBluetoothDeviceAddress == nil)
        #expect(data.advertisingInterval == nil)
        #expect(data.publicTargetAddresses.isEmpty)
        #expect(data.malformations.map(\.reason) == [
            .wrongLength(expected: 2...2, actual: 1),
            .wrongLength(expected: 7...7, actual: 3),
            .wrongLength(expected: 3...4, actual: 1),
            .partialElement(elementSize: 6, leftover: 4),
        ])
        #expect(data.malformations[2].reason.description == "data is 1 byte(s), must be 3 to 4")
    }

    @Test func contentAndLayoutProblemsTogetherInOffsetOrder() {
        let data = AdvertisingData(adBytes("02 0A F4 01 FF 03 09 41"))
        #expect(data.txPowerLevel == -12)
        #expect(data.malformations.map(\.offset) == [3, 5])
    }

    @Test func everyPrefixOfAValidPayloadIsTotal() {
        let full = adBytes("02 01 06 03 03 AA FE 0E 16 AA FE 10 EE 03 65 78 61 6D 70 6C 65 07 05 09 41 42 43 44")
        for count in 0...full.count {
            let data = AdvertisingData(Array(full.prefix(count)))
            exerciseEveryAccessor(data)
            let structureEnds: Set = [0, 3, 7, 22, 28]
            #expect(data.isWellFormed == structureEnds.contains(count), "prefix \(count)")
        }
    }

    @Test func seededRandomBytesNeverTrap() async {
        await cpuBound {
            var random = SeededRandom(seed: 0xAD_DA7A)
            var structures = 0
            for round in 0..<120_000 {
                await yieldPeriodically(iteration: round)
                var bytes = random.bytes(lengths: 0...(round % 4 == 0 ? 300 : 40))
                // Bias a share of inputs toward plausible layouts so typed content gets
                // exercised, not just rejected at the first length octet.
                if round % 2 == 1 { bytes = Self.plausible(&random) }
                let data = AdvertisingData(bytes)
                structures += exerciseEveryAccessor(data)
                // The accessors walk the bytes their own allocation-free way; they must see
                // the same structures as the public sequence.
                let walked = Array(data.structures)
                if let type = walked.last?.type, data.first(type) != walked.first(where: { $0.type == type })?.data {
                    Issue.record("first(\(type)) disagrees with structures for \(Hex.string(bytes))")
                }
                let listed = walked.filter { (0x02...0x07).contains($0.type.rawValue) }.reduce(0) {
                    $0 + $1.data.count / [2, 4, 16][Int($1.type.rawValue - 2) / 2]
                }
                if data.serviceUUIDs.count != listed {
                    Issue.record("serviceUUIDs disagrees with structures for \(Hex.string(bytes))")
                }
            }
            #expect(structures > 100_000)
        }
    }

    /// Random structures of real AD types with lengths close to right, plus random tails.
    static func plausible(_ random: inout SeededRandom) -> [UInt8] {
        let types: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x12, 0x14, 0x15, 0x16,
                              0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1F, 0x20, 0x21, 0x24, 0x27, 0x2F, 0x30, 0xFF]
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            let length = Int.random(in: 0...20, using: &random)
            bytes.append(UInt8(length))
            if length > 0 { bytes.append(types.randomElement(using: &random)!) }
            bytes += random.bytes(max(0, length - 1))
        }
        if Bool.random(using: &random) { bytes += random.bytes(lengths: 0...3) }
        return bytes
    }
}

/// Calls every accessor; returns the number of structures so the work is not optimised away.
@discardableResult
func exerciseEveryAccessor(_ data: AdvertisingData) -> Int {
    var count = 0
    for structure in data.structures {
        count += 1
        _ = structure.type.name
        _ = structure.data.count
    }
    _ = data.flags
    _ = data.serviceUUIDs
    _ = data.hasCompleteServiceList
    _ = data.localName
    _ = data.isLocalNameComplete
    _ = data.txPowerLevel
    _ = data.serviceData
    _ = data.manufacturerData.map(\.companyName)
    _ = data.appearance?.name
    _ = data.solicitedServiceUUIDs
    _ = data.publicTargetAddresses
    _ = data.randomTargetAddresses
    _ = data.advertisingInterval?.milliseconds
    _ = data.uri
    _ = data.leSupportedFeatures
    _ = data.leBluetoothDeviceAddress
    _ = data.broadcastName
    _ = data.peripheralConnectionIntervalRange
    _ = data.first(.uri)
    _ = data.all(.manufacturerSpecificData)
    _ = data.malformations.map(\.description)
    _ = data.description
    _ = AdvertisingData.merged(advertising: data, scanResponse: data).serviceUUIDs
    return count
}
