import BluetoothCore
@testable import HCI
import Testing

/// Host-side filters, duplicate policies with scripted timestamps, and parameter checks.
@Suite struct ScanFilterTests {
    func advertisement(_ address: UInt64 = 1, data: [UInt8] = [2, 1, 6], response: [UInt8]? = nil, rssi: Int8? = -50, at milliseconds: UInt64 = 0) -> Advertisement {
        Advertisement(
            address: DeviceAddress(BluetoothAddress(address), type: .random), eventType: [.connectable],
            rssi: rssi, advertisingData: AdvertisingData(data), scanResponseData: response.map(AdvertisingData.init),
            timestamp: milliseconds * 1_000_000
        )
    }

    func delivered(_ policy: DuplicatePolicy, limit: Int = 1024, _ advertisements: [Advertisement]) -> [Bool] {
        var tracker = DuplicateTracker(policy: policy, limit: limit)
        return advertisements.map { tracker.shouldDeliver($0) }
    }

    @Test func everyReport() {
        #expect(delivered(.all, [advertisement(), advertisement(), advertisement()]) == [true, true, true])
    }

    @Test func firstPerDevice() {
        #expect(delivered(.firstPerDevice, [advertisement(1), advertisement(2), advertisement(1, data: [9]), advertisement(2)]) == [true, true, false, false])
    }

    @Test func whenTheDataChanges() {
        let sequence = [
            advertisement(data: [1]), advertisement(data: [1]), advertisement(data: [2]),
            advertisement(data: [2], response: [7]), advertisement(data: [2], response: [7]), advertisement(data: [1]),
        ]
        #expect(delivered(.whenDataChanges, sequence) == [true, false, true, true, false, true])
    }

    @Test func whenTheRSSIMovesOrTimePasses() {
        let policy = DuplicatePolicy.whenRSSIChanges(byMoreThan: 5, orEvery: .seconds(1))
        let sequence = [
            advertisement(rssi: -50, at: 0),     // new
            advertisement(rssi: -54, at: 100),   // moved 4: no
            advertisement(rssi: -56, at: 200),   // moved 6 from the last delivered: yes
            advertisement(rssi: -60, at: 300),   // 4 from -56: no
            advertisement(rssi: -60, at: 1199),  // 999 ms: no
            advertisement(rssi: -60, at: 1200),  // 1 s since the last delivery: yes
            advertisement(rssi: nil, at: 1300),  // RSSI lost: a change
            advertisement(rssi: nil, at: 1400),  // still none: no
        ]
        #expect(delivered(policy, sequence) == [true, false, true, false, false, true, true, false])
    }

    @Test func theTrackedDeviceCapForgetsTheLeastRecentlySeen() {
        // Limit 2: A, B, then A seen again, then C: B is least recently seen and forgotten.
        var tracker = DuplicateTracker(policy: .firstPerDevice, limit: 2)
        let answers = [0xA, 0xB, 0xA, 0xC].map { tracker.shouldDeliver(advertisement(UInt64($0))) }
        #expect(answers == [true, true, false, true])
        #expect(tracker.entries.count == 2)
        let again = [0xA, 0xB].map { tracker.shouldDeliver(advertisement(UInt64($0))) }
        #expect(again == [false, true], "B was forgotten, so it is new again")
        // A crowd never grows the table past the limit.
        var crowd = DuplicateTracker(policy: .whenDataChanges, limit: 1024)
        for address in 0..<10_000 { _ = crowd.shouldDeliver(advertisement(UInt64(address))) }
        #expect(crowd.entries.count <= 1024)
        #expect(crowd.entries[DeviceAddress(BluetoothAddress(9_999), type: .random)] != nil)
    }

    @Test func filtersOnAddressAndRSSI() {
        let wanted = DeviceAddress(BluetoothAddress(1), type: .random)
        #expect(ScanFilter().matches(advertisement(rssi: nil)))
        #expect(ScanFilter(addresses: [wanted]).matches(advertisement(1)))
        #expect(!ScanFilter(addresses: [wanted]).matches(advertisement(2)))
        #expect(ScanFilter(minimumRSSI: -60).matches(advertisement(rssi: -60)))
        #expect(!ScanFilter(minimumRSSI: -60).matches(advertisement(rssi: -61)))
        #expect(!ScanFilter(minimumRSSI: -60).matches(advertisement(rssi: nil)))
    }

    @Test func nameAndServiceConditions() {
        let filter = ScanFilter(services: [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0x180F))], namePrefix: "BareBLE")
        #expect(filter.matches(name: "BareBLE-HRM", prefix: "BareBLE"))
        #expect(!filter.matches(name: "Other", prefix: "BareBLE"))
        #expect(!filter.matches(name: nil, prefix: "BareBLE"))
        #expect(filter.matches(services: [BluetoothUUID(UInt16(0x1800)), BluetoothUUID(UInt16(0x180F))]), "any of")
        #expect(!filter.matches(services: []))
        // Through the advertisement, names and services come from the data codec.
        let ad = advertisement(data: [12, 9] + Array("BareBLE-HRM".utf8) + [3, 3, 0x0D, 0x18])
        #expect(filter.matches(ad) == (ad.localName?.hasPrefix("BareBLE") == true && ad.serviceUUIDs.contains(BluetoothUUID(UInt16(0x180D)))))
    }

    @Test func accessorsLookInBothPayloads() {
        let ad = advertisement(data: [2, 1, 6], response: [5, 9] + Array("Name".utf8))
        #expect(ad.localName == AdvertisingData(ad.scanResponseData!.bytes).localName)
        #expect(ad.serviceUUIDs == ad.advertisingData.serviceUUIDs + ad.scanResponseData!.serviceUUIDs)
    }

    @Test func parametersConvertDurationsToUnitsWithRangeChecks() throws {
        let defaults = ScanParameters()
        #expect(defaults.intervalUnits == 160 && defaults.windowUnits == 160 && !defaults.active)
        let custom = try ScanParameters(active: true, interval: .milliseconds(60), window: .milliseconds(30))
        #expect(custom.intervalUnits == 96 && custom.windowUnits == 48)
        #expect(try ScanParameters(interval: .microseconds(2500)).intervalUnits == 4)
        #expect(try ScanParameters(interval: .milliseconds(10240)).intervalUnits == 0x4000)
        #expect(throws: ScanParameterError.outOfRange(field: "scan interval", value: .milliseconds(2))) {
            try ScanParameters(interval: .milliseconds(2))
        }
        #expect(throws: ScanParameterError.outOfRange(field: "scan interval", value: .seconds(11))) {
            try ScanParameters(interval: .seconds(11))
        }
        #expect(throws: ScanParameterError.windowLongerThanInterval(window: .milliseconds(50), interval: .milliseconds(40))) {
            try ScanParameters(interval: .milliseconds(40), window: .milliseconds(50))
        }
        #expect(throws: ScanParameterError.noPHY) { try ScanParameters(le1MPHY: false) }
        #expect(ScanParameterError.outOfRange(field: "scan interval", value: .seconds(11)).description.contains("2.5 ms...10.24 s"))
    }
}
