import BluetoothCore
@testable import HCI
import Testing
import TestSupport

/// The checks and conversions made before anything is sent: pure, no controller.
@Suite struct AdvertisingPlanTests {
    static let legacy = AdvertisingCapabilities(extendedCommands: false, maximumDataLength: 31, numberOfSets: 1)
    static let extended = AdvertisingCapabilities(extendedCommands: true, maximumDataLength: 400, numberOfSets: 4)

    func plan(
        _ parameters: AdvertisingParameters, data: Int = 3, scanResponse: Int? = nil,
        _ capabilities: AdvertisingCapabilities = legacy
    ) throws(AdvertisingError) -> AdvertisingPlan {
        try AdvertisingPlan(
            parameters, data: [UInt8](repeating: 0xAA, count: data),
            scanResponse: scanResponse.map { [UInt8](repeating: 0xBB, count: $0) }, capabilities: capabilities)
    }

    @Test(arguments: [
        (Duration.milliseconds(20), UInt32(32)), (.milliseconds(100), 160), (.milliseconds(101), 162),
        (.microseconds(20_312), 32), (.milliseconds(10_240), 0x4000), (.seconds(1), 1600),
    ])
    func intervalsBecomeUnitsOf625Microseconds(interval: Duration, units: UInt32) throws {
        let result = try plan(.init(kind: .nonConnectableUndirected, interval: interval))
        #expect(result.intervalMinimum == units)
        #expect(result.intervalMaximum == units)
    }

    @Test func intervalsOutsideTheRangeSayWhichRange() throws {
        #expect(throws: AdvertisingError.intervalOutOfRange(requested: .milliseconds(19), allowed: .milliseconds(20) ... .milliseconds(10_240), legacy: true)) {
            try plan(.init(kind: .nonConnectableUndirected, interval: .milliseconds(19)))
        }
        #expect(AdvertisingError.intervalOutOfRange(requested: .milliseconds(19), allowed: .milliseconds(20) ... .milliseconds(10_240), legacy: true).description
            == "advertising interval 19 ms is outside 20 ms ... 10240 ms for legacy advertising: choose one in that range")
        #expect(throws: AdvertisingError.intervalOutOfRange(requested: .milliseconds(10_241), allowed: .milliseconds(20) ... .milliseconds(10_240), legacy: true)) {
            try plan(.init(kind: .nonConnectableUndirected, interval: .milliseconds(10_241)))
        }
        // Extended PDUs go up to 0xFFFFFF units.
        let long = try plan(.init(kind: .nonConnectableUndirected, interval: .seconds(60), pduFormat: .extended), Self.extended)
        #expect(long.intervalMinimum == 96_000)
        let tooLong = AdvertisingError.intervalOutOfRange(
            requested: .seconds(20_000), allowed: .milliseconds(20) ... .nanoseconds(Int64(0xFF_FFFF) * 625_000), legacy: false)
        #expect(throws: tooLong) { try plan(.init(kind: .nonConnectableUndirected, interval: .seconds(20_000), pduFormat: .extended), Self.extended) }
        #expect(tooLong.description == "advertising interval 20000000 ms is outside 20 ms ... 10485759.375 ms for extended advertising: choose one in that range")
        #expect(throws: AdvertisingError.intervalsReversed(minimum: .milliseconds(200), maximum: .milliseconds(100))) {
            try plan(.init(kind: .nonConnectableUndirected, interval: .milliseconds(200), maximumInterval: .milliseconds(100)))
        }
        #expect(throws: AdvertisingError.self) { try plan(.init(kind: .nonConnectableUndirected, interval: .milliseconds(-100))) }
    }

    @Test func dataLimitsNameTheOverflow() throws {
        #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 32, limit: 31)) {
            try plan(.init(kind: .nonConnectableUndirected), data: 32)
        }
        #expect(throws: AdvertisingError.dataTooLong(what: "scan response data", length: 40, limit: 31)) {
            try plan(.init(kind: .scannableUndirected), scanResponse: 40)
        }
        #expect(AdvertisingError.dataTooLong(what: "scan response data", length: 40, limit: 31).description
            == "scan response data is 40 bytes but legacy advertising carries at most 31: shorten it or use extended advertising")
        // Legacy PDUs from an extended set: still 31.
        #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 40, limit: 31)) {
            try plan(.init(kind: .nonConnectableUndirected, pduFormat: .legacy), data: 40, Self.extended)
        }
        // Extended PDUs: the controller's maximum.
        #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 401, limit: 400)) {
            try plan(.init(kind: .nonConnectableUndirected), data: 401, Self.extended)
        }
        #expect(AdvertisingError.dataTooLong(what: "advertising data", length: 401, limit: 400).description
            == "advertising data is 401 bytes but this controller's extended advertising carries at most 400: shorten it")
        #expect(try plan(.init(kind: .nonConnectableUndirected), data: 400, Self.extended).legacyPDUs == false)
        // The specification's 1650 caps whatever a controller reports.
        let reported = AdvertisingCapabilities(extendedCommands: true, maximumDataLength: 1650, numberOfSets: 1)
        #expect(reported.maximumDataLength == AdvertisingCapabilities.specificationMaximumDataLength)
    }

    @Test func kindRulesAreErrorsWithAWayOut() throws {
        #expect(throws: AdvertisingError.connectableExtendedCannotBeScannable) {
            try plan(.init(kind: .connectableUndirected, pduFormat: .extended), scanResponse: 5, Self.extended)
        }
        #expect(AdvertisingError.connectableExtendedCannotBeScannable.description
            == "connectable advertising with extended PDUs cannot be scannable, so it has no scan response: drop the scan response, or use legacy PDUs (31 bytes each)")
        #expect(throws: AdvertisingError.scanResponseNotAllowed(.nonConnectableUndirected)) {
            try plan(.init(kind: .nonConnectableUndirected), scanResponse: 5)
        }
        #expect(AdvertisingError.scanResponseNotAllowed(.nonConnectableUndirected).description
            == "non-connectable advertising is not scannable, so it sends no scan response: drop the scan response or advertise as scannable")
        #expect(throws: AdvertisingError.extendedScannableNeedsScanResponseOnly) {
            try plan(.init(kind: .scannableUndirected, pduFormat: .extended), data: 5, scanResponse: 5, Self.extended)
        }
        #expect(try plan(.init(kind: .scannableUndirected, pduFormat: .extended), data: 0, scanResponse: 300, Self.extended).isScannable)
        // Connectable legacy advertising (ADV_IND) is scannable too.
        let advInd = try plan(.init(kind: .connectableUndirected), scanResponse: 31)
        #expect(advInd.isScannable && advInd.advertisingType == .connectableUndirected)
    }

    @Test func legacyControllersRefuseExtendedOnlyRequests() throws {
        let cases: [(AdvertisingParameters, String)] = [
            (.init(kind: .nonConnectableUndirected, pduFormat: .extended), "advertising with extended PDUs"),
            (.init(kind: .nonConnectableUndirected, txPower: 0), "choosing the TX power"),
            (.init(kind: .nonConnectableUndirected, secondaryPHY: .le2M), "advertising on a PHY other than LE 1M"),
            (.init(kind: .nonConnectableUndirected, duration: .seconds(1)), "an advertising duration"),
            (.init(kind: .nonConnectableUndirected, maximumEvents: 3), "a maximum number of advertising events"),
        ]
        for (parameters, what) in cases {
            #expect(throws: AdvertisingError.requiresExtendedAdvertising(what)) { try plan(parameters) }
        }
        #expect(AdvertisingError.requiresExtendedAdvertising("choosing the TX power").description
            == "choosing the TX power needs extended advertising, which this controller does not have: leave it out")
    }

    @Test func automaticFormatPrefersLegacyPDUsWhenTheyFit() throws {
        #expect(try plan(.init(kind: .connectableUndirected), data: 31, scanResponse: 31, Self.extended).legacyPDUs)
        #expect(try plan(.init(kind: .connectableUndirected), data: 32, Self.extended).legacyPDUs == false)
        // Only legacy PDUs carry data plus scan response for a connectable set: the error
        // names the overflow rather than the extended rule.
        #expect(throws: AdvertisingError.dataTooLong(what: "scan response data", length: 40, limit: 31)) {
            try plan(.init(kind: .connectableUndirected), scanResponse: 40, Self.extended)
        }
        #expect(throws: AdvertisingError.dataTooLong(what: "advertising data", length: 40, limit: 31)) {
            try plan(.init(kind: .scannableUndirected), data: 40, scanResponse: 3, Self.extended)
        }
        #expect(try plan(.init(kind: .nonConnectableUndirected, secondaryPHY: .le2M), Self.extended).legacyPDUs == false)
        #expect(try plan(.init(kind: .nonConnectableUndirected, interval: .seconds(11)), Self.extended).legacyPDUs == false)
        #expect(try plan(.init(kind: .connectableUndirected), Self.extended).eventProperties == [.useLegacyPDUs, .connectable, .scannable])
        #expect(try plan(.init(kind: .scannableUndirected), Self.extended).eventProperties == [.useLegacyPDUs, .scannable])
        #expect(try plan(.init(kind: .nonConnectableUndirected), Self.extended).eventProperties == [.useLegacyPDUs])
        #expect(try plan(.init(kind: .connectableUndirected, pduFormat: .extended), Self.extended).eventProperties == [.connectable])
    }

    @Test func otherParameterRanges() throws {
        #expect(throws: AdvertisingError.invalidParameter("TX power 21 dBm is outside -127 ... 20 dBm: choose a power in that range")) {
            try plan(.init(kind: .nonConnectableUndirected, txPower: 21), Self.extended)
        }
        #expect(throws: AdvertisingError.self) { try plan(.init(kind: .nonConnectableUndirected, advertisingSID: 16), Self.extended) }
        #expect(throws: AdvertisingError.self) { try plan(.init(kind: .nonConnectableUndirected, duration: .seconds(700)), Self.extended) }
        #expect(throws: AdvertisingError.self) { try plan(.init(kind: .nonConnectableUndirected, maximumEvents: 0), Self.extended) }
        #expect(throws: AdvertisingError.self) { try plan(.init(kind: .nonConnectableUndirected, pduFormat: .extended, primaryPHY: .le2M), Self.extended) }
        #expect(throws: AdvertisingError.self) { try plan(.init(kind: .nonConnectableUndirected, pduFormat: .legacy, secondaryPHY: .leCoded), Self.extended) }
        #expect(try plan(.init(kind: .nonConnectableUndirected, duration: .milliseconds(1500)), Self.extended).durationUnits == 150)
    }

    @Test func longDataIsFragmentedFirstIntermediateLast() {
        let data = (0..<600).map { UInt8(truncatingIfNeeded: $0) }
        let fragments = AdvertisingPlan.fragments(data)
        #expect(fragments.map(\.0) == [.firstFragment, .intermediateFragment, .lastFragment])
        #expect(fragments.map(\.1.count) == [251, 251, 98])
        #expect(fragments.flatMap(\.1) == data)
        #expect(AdvertisingPlan.fragments(Array(data[..<251])).map(\.0) == [.completeData])
        #expect(AdvertisingPlan.fragments([]).map(\.1) == [[]])
        #expect(AdvertisingPlan.fragments(Array(data[..<252])).map(\.1.count) == [251, 1])
    }

    @Test func randomStaticAddressesHaveTheirForm() {
        var random = SeededRandom(seed: 11)
        for _ in 0..<10_000 {
            let address = BluetoothAddress.randomStatic(using: &random)
            #expect(address.mostSignificantByte >> 6 == 0b11)
            #expect(address.isValidRandomStatic)
            #expect(DeviceAddress(address, type: .random).kind == .randomStatic)
        }
        // A generator that first produces the two forbidden patterns is drawn again.
        var scripted = ScriptedGenerator(values: [0, 0xFFFF_FFFF_FFFF_FFFF, 0x1234_5678_9ABC])
        #expect(BluetoothAddress.randomStatic(using: &scripted) == BluetoothAddress(0xD234_5678_9ABC))
        #expect(!BluetoothAddress(0xC000_0000_0000).isValidRandomStatic)
        #expect(!BluetoothAddress(0xFFFF_FFFF_FFFF).isValidRandomStatic)
        #expect(!BluetoothAddress(0x4000_0000_0001).isValidRandomStatic)
        #expect(BluetoothAddress.randomStatic().isValidRandomStatic)
    }
}

/// Returns the given values in order (then zeros): forces the rejection paths.
struct ScriptedGenerator: RandomNumberGenerator {
    var values: [UInt64]

    mutating func next() -> UInt64 { values.isEmpty ? 0 : values.removeFirst() }
}
