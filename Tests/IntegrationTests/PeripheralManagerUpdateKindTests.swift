import BareBLE
import GATT
import Testing
import TestSupport

extension PeripheralManagerVirtualRadio {
    @Test("updateValue as an indication to a central that enabled notifications and indications sends the indication, and it is confirmed")
    func anIndicationAskedForIsIndicatedWhenBothAreEnabled() async throws {
        let served = try await serve("BareBLE-PM-BOTH")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        let log = try PeripheralRadio.log.get()
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let counter = try #require(manager.database.characteristic(Self.counter))
        let cccd = try #require(counter.clientCharacteristicConfigurationHandle)
        // Bumble's client logs what comes to its indication subscription; its CCCD then
        // gets the notification bit as well.
        try await PeripheralRadio.central(name, "subscribe \(Self.counter.uuidString128) indicate")
        #expect(try await PeripheralRadio.central(name, "write \(cccd) 0300")["written"] as? Bool == true)
        _ = try await served.events.next("both enabled") { event -> Bool? in
            if case let .subscribed(request, configuration) = event, request.valueHandle == counter.valueHandle,
               configuration == [.notification, .indication] { true } else { nil }
        }
        #expect(manager.updateValue([0x05], for: counter.valueHandle, as: .indication))
        let indicated = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == Int(counter.valueHandle) }
        #expect(indicated["value"] as? String == "05")
        try await waitUntil { manager.statistics.indicationsConfirmed == 1 }
        #expect(manager.statistics.notificationsSent == 0)
    }
}
