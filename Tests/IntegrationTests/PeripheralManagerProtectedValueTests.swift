import ATT
import BareBLE
import BluetoothCore
import GATT
import Testing
import TestSupport

extension PeripheralManagerVirtualRadio {
    static let guarded = BluetoothUUID("B4AE2006-7E57-4BA2-B1E0-00000000C0DE")!
    static let declaredOpen = BluetoothUUID("B4AE2007-7E57-4BA2-B1E0-00000000C0DE")!

    /// Two notifying values that need encryption to be read: one with the CCCD the store
    /// adds, one whose CCCD the application declared open.
    static func protectedServices() -> [GATTDatabase.Service] {
        let encrypted = ATTPermissions(read: .init(protection: .encryption))
        return [GATTDatabase.Service(uuid: service, characteristics: [
            .init(uuid: guarded, properties: [.read, .notify], value: [0], permissions: encrypted),
            .init(uuid: declaredOpen, properties: [.read, .notify], value: [0], permissions: encrypted,
                  descriptors: [.init(uuid: GATTUUID.clientCharacteristicConfiguration, permissions: .readWrite)]),
        ])]
    }

    @Test("a value that needs encryption to be read reaches no unencrypted link: its CCCD asks Bumble to pair (0x05), and through a CCCD declared open nothing goes out until the link is encrypted")
    func protectedValuesStayOffUnencryptedLinks() async throws {
        let served = try await serve("BareBLE-PM-ENC", pairing: "io=no-input-no-output sc=1 mitm=0 bonding=0", services: Self.protectedServices())
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        let log = try PeripheralRadio.log.get()
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let guarded = try #require(manager.database.characteristic(Self.guarded))
        let declaredOpen = try #require(manager.database.characteristic(Self.declaredOpen))
        let guardedCCCD = try #require(guarded.clientCharacteristicConfigurationHandle)

        let refused = try await PeripheralRadio.central(name, "write \(guardedCCCD) 0100")
        #expect(refused["error"] as? Int == 0x05, "\(refused)")
        // Bumble's client logs only the values of what it subscribed to: it subscribes.
        try await PeripheralRadio.central(name, "subscribe \(Self.declaredOpen.uuidString128)")
        _ = try await served.events.next("subscription through the open CCCD") { event -> Bool? in
            if case let .subscribed(request, _) = event, request.valueHandle == declaredOpen.valueHandle { true } else { nil }
        }
        #expect(manager.updateValue([0x01], for: declaredOpen.valueHandle))
        #expect(manager.statistics.valuesWithheldFromUnprotectedLinks == 1)
        #expect(manager.statistics.notificationsSent == 0)

        let paired = try await PeripheralRadio.central(name, "pair", timeout: .seconds(45))
        #expect(paired["paired"] as? Bool == true, "\(paired)")
        try await PeripheralRadio.central(name, "subscribe \(Self.guarded.uuidString128)")
        _ = try await served.events.next("subscription once encrypted") { event -> Bool? in
            if case let .subscribed(request, _) = event, request.valueHandle == guarded.valueHandle { true } else { nil }
        }
        #expect(manager.updateValue([0x02], for: declaredOpen.valueHandle))
        #expect(manager.updateValue([0x03], for: guarded.valueHandle))
        // The log keeps Bumble's notifications in the order they came: the first through
        // the open CCCD is the one sent after pairing.
        let first = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == Int(declaredOpen.valueHandle) }
        #expect(first["value"] as? String == "02")
        let other = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == Int(guarded.valueHandle) }
        #expect(other["value"] as? String == "03")
        #expect(manager.statistics.valuesWithheldFromUnprotectedLinks == 1)
        #expect(manager.statistics.notificationsSent == 2)
    }
}
