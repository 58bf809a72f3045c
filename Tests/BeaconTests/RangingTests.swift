import Beacon
import BluetoothCore
import HCI
import Testing
import TestSupport

let second: UInt64 = 1_000_000_000
let millisecond: UInt64 = 1_000_000

func iBeacon(minor: UInt16, power: Int8 = -59) -> BeaconFrame {
    .iBeacon(IBeacon(proximityUUID: BluetoothUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: minor, measuredPower: power))
}

extension BeaconRanger {
    /// Feeds `rssi` values at `interval` from `start`; returns the time after the last one.
    @discardableResult
    mutating func feed(_ frame: BeaconFrame, _ rssi: [Int8], from start: UInt64, every interval: UInt64 = 100 * millisecond) -> UInt64 {
        var time = start
        for value in rssi {
            observe(frame, rssi: value, at: time)
            time += interval
        }
        return time
    }
}

@Suite struct RangingTests {
    @Test func rssiAtMeasuredPowerIsAboutOneMetreAndNear() throws {
        var ranger = BeaconRanger()
        let end = ranger.feed(iBeacon(minor: 1), Array(repeating: -59, count: 20), from: 0)
        let ticked = ranger.tick(now: end)
        let report = try #require(ticked)
        let beacon = try #require(report.beacons.first)
        #expect(abs(try #require(beacon.distance) - 1.0) < 0.01)
        #expect(beacon.proximity == .near)
        // A steady signal still carries the 1 dB floor: 10^(1/20) - 1 ≈ 0.12 m.
        #expect(abs(try #require(beacon.accuracy) - 0.122) < 0.01)
        #expect(report.closest == beacon.identity)
    }

    @Test func weakSignalIsFar() throws {
        var ranger = BeaconRanger()
        let end = ranger.feed(iBeacon(minor: 1), Array(repeating: -90, count: 20), from: 0)
        let ticked = ranger.tick(now: end)
        let beacon = try #require(ticked?.beacons.first)
        #expect(beacon.proximity == .far)
        // 10^(31/20) ≈ 35.5 m.
        #expect(abs(try #require(beacon.distance) - 35.48) < 0.1)
    }

    @Test func strongSignalIsImmediate() throws {
        var ranger = BeaconRanger()
        let end = ranger.feed(iBeacon(minor: 1), Array(repeating: -45, count: 20), from: 0)
        #expect(ranger.tick(now: end)?.beacons.first?.proximity == .immediate)
    }

    @Test func eddystoneUsesItsZeroMetrePowerLessFortyOne() throws {
        var ranger = BeaconRanger()
        let uid = try EddystoneUID(txPower: -18, namespace: Array(0..<10), instance: Array(0..<6))
        let end = ranger.feed(.eddystone(.uid(uid)), Array(repeating: -59, count: 10), from: 0)
        let ticked = ranger.tick(now: end)
        let beacon = try #require(ticked?.beacons.first)
        #expect(beacon.measuredPower == -59)
        #expect(abs(try #require(beacon.distance) - 1.0) < 0.01)
    }

    @Test func outliersAreRejected() throws {
        var ranger = BeaconRanger()
        // Steady -65 with a spike in every five samples, alternately far too strong and
        // far too weak: fast fading as a scanner sees it.
        var series: [Int8] = []
        for index in 0..<100 { series.append(index % 5 == 2 ? (index % 10 == 2 ? -35 : -95) : -65) }
        let end = ranger.feed(iBeacon(minor: 1), series, from: 0)
        let ticked = ranger.tick(now: end)
        let beacon = try #require(ticked?.beacons.first)
        #expect(abs(try #require(beacon.rssi) + 65) < 0.01)
        // The spread is robust too: the spikes do not widen the accuracy beyond the floor.
        #expect(try #require(beacon.accuracy) < 0.3)
    }

    @Test func convergesWithinAFewSecondsAfterAStep() throws {
        var ranger = BeaconRanger()
        var time = ranger.feed(iBeacon(minor: 1), Array(repeating: -60, count: 50), from: 0)
        time = ranger.feed(iBeacon(minor: 1), Array(repeating: -70, count: 10), from: time)
        // One second after the step the filter is on its way but not there.
        let ticked = ranger.report(now: time)
        let early = try #require(ticked.beacons.first?.rssi)
        #expect(early < -62 && early > -69)
        time = ranger.feed(iBeacon(minor: 1), Array(repeating: -70, count: 20), from: time)
        // Three seconds after the step: within 1 dB.
        let tickedLater = ranger.report(now: time)
        let late = try #require(tickedLater.beacons.first?.rssi)
        #expect(abs(late + 70) < 1)
    }

    @Test func convergesAtOneHertzToo() throws {
        var ranger = BeaconRanger()
        var time = ranger.feed(iBeacon(minor: 1), Array(repeating: -60, count: 10), from: 0, every: second)
        time = ranger.feed(iBeacon(minor: 1), Array(repeating: -70, count: 6), from: time, every: second)
        let ticked = ranger.report(now: time)
        let rssi = try #require(ticked.beacons.first?.rssi)
        #expect(abs(rssi + 70) < 1)
    }

    @Test func tooFewSamplesOrQuietIsUnknown() throws {
        var ranger = BeaconRanger()
        ranger.observe(iBeacon(minor: 1), rssi: -59, at: 0)
        ranger.observe(iBeacon(minor: 1), rssi: -59, at: 100 * millisecond)
        #expect(ranger.report(now: 200 * millisecond).beacons.first?.proximity == .unknown)
        ranger.observe(iBeacon(minor: 1), rssi: -59, at: 200 * millisecond)
        #expect(ranger.report(now: 300 * millisecond).beacons.first?.proximity == .near)
        // Quiet for more than the 5 s staleness limit.
        let ticked = ranger.report(now: 5_300 * millisecond)
        let quiet = try #require(ticked.beacons.first)
        #expect(quiet.proximity == .unknown)
        #expect(quiet.distance == nil && quiet.accuracy == nil && quiet.rssi == nil)
        // Quiet for more than 30 s: gone.
        #expect(ranger.report(now: 31 * second).beacons.isEmpty)
    }

    @Test func sortsNearestFirstUnknownLast() throws {
        var ranger = BeaconRanger()
        ranger.feed(iBeacon(minor: 1), Array(repeating: -80, count: 10), from: 0)
        ranger.feed(iBeacon(minor: 2), Array(repeating: -50, count: 10), from: 0)
        ranger.feed(iBeacon(minor: 3), [-40], from: 0)
        ranger.feed(iBeacon(minor: 4), Array(repeating: -65, count: 10), from: 0)
        let ticked = ranger.tick(now: second)
        let minors = try #require(ticked).beacons.map { beacon -> UInt16 in
            guard case let .iBeacon(_, _, minor) = beacon.identity else { return 0 }
            return minor
        }
        #expect(minors == [2, 4, 1, 3])
    }

    @Test func ticksKeepAFixedCadence() {
        var ranger = BeaconRanger()
        #expect(ranger.tick(now: 0) != nil)
        #expect(ranger.tick(now: 500 * millisecond) == nil)
        #expect(ranger.tick(now: 1_000 * millisecond) != nil)
        // Late by 300 ms: the next one is still due at 3 s, not 3.3 s.
        #expect(ranger.tick(now: 2_300 * millisecond) != nil)
        #expect(ranger.nextTick == 3 * second)
        // Far behind: the cadence restarts from now.
        #expect(ranger.tick(now: 10 * second) != nil)
        #expect(ranger.nextTick == 11 * second)
    }

    @Test func closestChangesWhenTwoBeaconsSwap() throws {
        var ranger = BeaconRanger()
        let a = iBeacon(minor: 1)
        let b = iBeacon(minor: 2)
        var events: [ClosestBeaconChange] = []
        var time: UInt64 = 0
        // Ten seconds with A at -55 and B at -75, then ten with them swapped.
        for step in 0..<200 {
            let swapped = step >= 100
            ranger.observe(a, rssi: swapped ? -75 : -55, at: time)
            ranger.observe(b, rssi: swapped ? -55 : -75, at: time)
            time += 100 * millisecond
            if let change = ranger.tick(now: time)?.closestChange { events.append(change) }
        }
        #expect(events == [
            ClosestBeaconChange(previous: nil, current: a.identity),
            ClosestBeaconChange(previous: a.identity, current: b.identity),
        ])
    }

    /// Two beacons at the same distance whose readings wander by a decibel, slowly
    /// enough that the smoothed order really swaps every two seconds.
    func closestChanges(margin: Double) -> Int {
        var configuration = BeaconRanger.Configuration()
        configuration.closestMargin = margin
        var ranger = BeaconRanger(configuration: configuration)
        let a = iBeacon(minor: 1)
        let b = iBeacon(minor: 2)
        var changes = 0
        var time: UInt64 = 0
        for step in 0..<600 {
            let wander: Int8 = (step / 20) % 2 == 0 ? 1 : -1
            ranger.observe(a, rssi: -65 + wander, at: time)
            ranger.observe(b, rssi: -65, at: time)
            time += 100 * millisecond
            if ranger.tick(now: time)?.closestChange != nil { changes += 1 }
        }
        return changes
    }

    @Test func noFlappingAtEqualDistance() {
        // Without hysteresis the nearest flips with every wander ...
        #expect(closestChanges(margin: 0) > 20)
        // ... with the default 2 dB margin the first choice holds.
        #expect(closestChanges(margin: BeaconRanger.Configuration().closestMargin) == 1)
    }

    @Test func closestGoesAwayWhenItGoesQuiet() throws {
        var ranger = BeaconRanger()
        let end = ranger.feed(iBeacon(minor: 1), Array(repeating: -60, count: 10), from: 0)
        #expect(ranger.tick(now: end)?.closest == iBeacon(minor: 1).identity)
        let ticked = ranger.tick(now: end + 6 * second)
        let report = try #require(ticked)
        #expect(report.closest == nil)
        #expect(report.closestChange == ClosestBeaconChange(previous: iBeacon(minor: 1).identity, current: nil))
    }

    @Test func observesAdvertisements() throws {
        var ranger = BeaconRanger()
        let address = DeviceAddress(BluetoothAddress("C4:4B:4D:00:00:01")!, type: .random)
        let data = try IBeacon(proximityUUID: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 1, measuredPower: -59).advertisingData()
        for index in 0..<5 {
            let advertisement = Advertisement(address: address, eventType: [.legacy], rssi: -59, advertisingData: data, timestamp: UInt64(index) * 100 * millisecond)
            #expect(ranger.observe(advertisement) == iBeacon(minor: 1).identity)
        }
        // No RSSI, or not a beacon: not counted.
        #expect(ranger.observe(Advertisement(address: address, eventType: [.legacy], rssi: nil, advertisingData: data)) == nil)
        #expect(ranger.observe(Advertisement(address: address, eventType: [.legacy], rssi: -40, advertisingData: AdvertisingData([2, 1, 6]))) == nil)
        let ticked = ranger.tick(now: second)
        let beacon = try #require(ticked?.beacons.first)
        #expect(beacon.address == address)
        #expect(beacon.sampleCount == 5)
    }

    /// An advertiser cycling minors (a new identity every packet, 40,000 of them within
    /// the 30 s a beacon is remembered): the table stays at its bound, the ones heard
    /// longest ago go and are counted, and a real beacon heard all along stays.
    @Test func identitiesCycledByAnAdvertiserStayBounded() async throws {
        try await cpuBound {
            var configuration = BeaconRanger.Configuration()
            configuration.maximumBeacons = 256
            var ranger = BeaconRanger(configuration: configuration)
            let real = iBeacon(minor: 0)
            var time: UInt64 = 0
            for index in 0..<40_000 {
                ranger.observe(iBeacon(minor: UInt16(1 + index % 60_000)), rssi: -70, at: time)
                if index.isMultiple(of: 100) { ranger.observe(real, rssi: -59, at: time) }
                time += 500_000
            }
            let ticked = ranger.tick(now: time)
            let report = try #require(ticked)
            #expect(report.beacons.count == 256)
            #expect(ranger.beaconsEvicted == 40_000 + 400 - 256 - (40_000 / 100 - 1))
            let kept = try #require(report.beacons.first { $0.identity == real.identity })
            #expect(kept.lastRSSI == -59 && kept.sampleCount == 400)
        }
    }

    @Test func pathLossExponentIsConfigurable() {
        let model = PathLossModel(exponent: 3)
        #expect(abs(model.distance(rssi: -89, measuredPower: -59) - 10) < 1e-9)
        #expect(abs(PathLossModel().distance(rssi: -79, measuredPower: -59) - 10) < 1e-9)
    }
}
