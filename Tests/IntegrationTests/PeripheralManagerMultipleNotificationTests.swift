import BareBLE
import GATT
import Testing
import TestSupport

extension PeripheralManagerVirtualRadio {
    @Test("updateValues: one notification per value until the central sets Multiple Handle Value Notifications in its Client Supported Features, then one PDU for both values")
    func valuesGoTogetherOnceTheCentralEnabledMultipleNotifications() async throws {
        let served = try await serve("BareBLE-PM-MULTI")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        let log = try PeripheralRadio.log.get()
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let counter = try #require(manager.database.characteristic(Self.counter))
        let level = try #require(manager.database.characteristic(Self.batteryLevel))
        let features = try #require(manager.database.characteristic(GATTUUID.clientSupportedFeatures))
        try await PeripheralRadio.central(name, "subscribe \(Self.counter.uuidString128)")
        try await PeripheralRadio.central(name, "subscribe \(Self.batteryLevel.description)")
        let handles = (counter: Int(counter.valueHandle), level: Int(level.valueHandle))

        #expect(manager.updateValues([(counter.valueHandle, [0x01]), (level.valueHandle, [0x02, 0x03])]))
        let first = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == handles.counter }
        let second = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == handles.level }
        #expect(first["value"] as? String == "01")
        #expect(second["value"] as? String == "0203")

        #expect(try await PeripheralRadio.central(name, "write \(features.valueHandle) 04")["written"] as? Bool == true)
        let mark = log.count
        #expect(manager.updateValues([(counter.valueHandle, [0x11]), (level.valueHandle, [0x12, 0x13])]))
        let together = try await log.wait("multiple-notification") { $0["peer"] as? String == name }
        #expect(together["malformed"] as? Bool == false)
        let values = try #require(together["values"] as? [[String: Any]])
        #expect(values.map { $0["handle"] as? Int } == [handles.counter, handles.level])
        #expect(values.map { $0["value"] as? String } == ["11", "1213"])
        #expect(!log.events(since: mark).contains { $0["event"] as? String == "notification" && $0["peer"] as? String == name })
        #expect(manager.statistics.notificationsSent == 4)
    }
}
