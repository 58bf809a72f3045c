import Beacon
import BluetoothCore
import HCI
import Testing

@Suite struct RegionTests {
    let uuid = BluetoothUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    let otherUUID = BluetoothUUID("F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!
    let namespace: [UInt8] = Array(0..<10)

    func beacon(_ major: UInt16, _ minor: UInt16, uuid: BluetoothUUID? = nil) -> BeaconIdentity {
        .iBeacon(proximityUUID: uuid ?? self.uuid, major: major, minor: minor)
    }

    @Test func entersOnFirstSightingAndExitsWithinTimeoutPlusOnePeriod() throws {
        var monitor = RegionMonitor()
        let region = try BeaconRegion.iBeacon("lobby", proximityUUID: uuid)
        monitor.startMonitoring(region, now: 0)
        #expect(monitor.state(of: region) == .unknown)
        #expect(monitor.observe(beacon(1, 1), at: 2 * second) == [.entered(region)])
        #expect(monitor.state(of: region) == .inside)
        // Heard again: no second event.
        #expect(monitor.observe(beacon(1, 2), at: 3 * second).isEmpty)
        // Ticks every second after the last sighting at 3 s: the exit comes at the first
        // tick at least 30 s later, so within 30 s + one period.
        var exitTime: UInt64?
        var now: UInt64 = 3 * second + 500 * millisecond
        while exitTime == nil, now < 40 * second {
            if monitor.tick(now: now) == [.exited(region)] { exitTime = now }
            now += second
        }
        let exit = try #require(exitTime)
        #expect(exit >= 33 * second && exit <= 34 * second)
        #expect(monitor.state(of: region) == .outside)
        // Seen again: entered again.
        #expect(monitor.observe(beacon(1, 1), at: 40 * second) == [.entered(region)])
    }

    @Test func silenceFromTheStartIsOutsideWithoutAnEvent() throws {
        var monitor = RegionMonitor(exitTimeout: 10 * second)
        let region = try BeaconRegion.iBeacon("lobby", proximityUUID: uuid)
        monitor.startMonitoring(region)
        #expect(monitor.tick(now: 5 * second).isEmpty)
        #expect(monitor.state(of: region) == .unknown)
        #expect(monitor.tick(now: 15 * second).isEmpty)
        #expect(monitor.state(of: region) == .outside)
    }

    @Test func matchesByUUIDMajorAndMinor() throws {
        let any = try BeaconRegion.iBeacon("any", proximityUUID: uuid)
        let floor = try BeaconRegion.iBeacon("floor", proximityUUID: uuid, major: 7)
        let desk = try BeaconRegion.iBeacon("desk", proximityUUID: uuid, major: 7, minor: 3)
        #expect(any.contains(beacon(1, 1)) && any.contains(beacon(7, 3)))
        #expect(!any.contains(beacon(7, 3, uuid: otherUUID)))
        #expect(floor.contains(beacon(7, 1)) && !floor.contains(beacon(8, 1)))
        #expect(desk.contains(beacon(7, 3)) && !desk.contains(beacon(7, 4)) && !desk.contains(beacon(6, 3)))
        #expect(!any.contains(.eddystoneUID(namespace: namespace, instance: Array(0..<6))))
        #expect(throws: BeaconRegionError.minorWithoutMajor("bad")) { try BeaconRegion.iBeacon("bad", proximityUUID: uuid, minor: 3) }
    }

    @Test func severalRegionsAtOnce() throws {
        var monitor = RegionMonitor()
        let any = try BeaconRegion.iBeacon("any", proximityUUID: uuid)
        let desk = try BeaconRegion.iBeacon("desk", proximityUUID: uuid, major: 7, minor: 3)
        let other = try BeaconRegion.iBeacon("other", proximityUUID: otherUUID)
        for region in [any, desk, other] { monitor.startMonitoring(region, now: 0) }
        #expect(monitor.observe(beacon(1, 1), at: second) == [.entered(any)])
        #expect(monitor.observe(beacon(7, 3), at: 2 * second) == [.entered(desk)])
        #expect(monitor.state(of: other) == .unknown)
        // The desk beacon stops at 2 s, others in the UUID keep going: only the desk exits.
        var events: [RegionEvent] = []
        for tick in 3...40 {
            let now = UInt64(tick) * second
            events += monitor.observe(beacon(1, 1), at: now - 1)
            events += monitor.tick(now: now)
        }
        #expect(events == [.exited(desk)])
        #expect(monitor.state(of: any) == .inside)
        #expect(monitor.state(of: other) == .outside)
        monitor.stopMonitoring(any)
        #expect(monitor.state(of: any) == nil)
        #expect(monitor.regions == [desk, other])
    }

    @Test func eddystoneNamespaceAndInstanceRegions() throws {
        var monitor = RegionMonitor()
        let building = try BeaconRegion.eddystone("building", namespace: namespace)
        let room = try BeaconRegion.eddystone("room", namespace: namespace, instance: [0, 0, 0, 0, 0, 9])
        monitor.startMonitoring(building, now: 0)
        monitor.startMonitoring(room, now: 0)
        let uid = try EddystoneUID(txPower: -18, namespace: namespace, instance: [0, 0, 0, 0, 0, 1])
        let address = DeviceAddress(BluetoothAddress("C4:4B:4D:00:00:01")!, type: .random)
        let advertisement = Advertisement(address: address, eventType: [.legacy], advertisingData: try EddystoneFrame.uid(uid).advertisingData(), timestamp: second)
        #expect(monitor.observe(advertisement) == [.entered(building)])
        #expect(monitor.observe(.eddystoneUID(namespace: namespace, instance: [0, 0, 0, 0, 0, 9]), at: 2 * second) == [.entered(room)])
        #expect(!building.contains(.eddystoneUID(namespace: Array(1...10), instance: [0, 0, 0, 0, 0, 9])))
        #expect(throws: BeaconRegionError.wrongIdentifierLength("short", field: "namespace", expected: 10, actual: 4)) {
            try BeaconRegion.eddystone("short", namespace: [1, 2, 3, 4])
        }
    }

    @Test func restartingARegionReplacesItByIdentifier() throws {
        var monitor = RegionMonitor()
        monitor.startMonitoring(try BeaconRegion.iBeacon("r", proximityUUID: uuid), now: 0)
        let narrowed = try BeaconRegion.iBeacon("r", proximityUUID: uuid, major: 2)
        monitor.startMonitoring(narrowed, now: 0)
        #expect(monitor.regions == [narrowed])
        #expect(monitor.observe(beacon(1, 1), at: second).isEmpty)
        #expect(monitor.observe(beacon(2, 1), at: second) == [.entered(narrowed)])
    }
}
