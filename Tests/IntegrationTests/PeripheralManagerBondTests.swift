import ATT
import BareBLE
import BluetoothCore
import Bonding
import Foundation
import GATT
import Testing
import TestSupport

/// A bonded central's GATT state across connections (Core 5.4 Vol 3 Part G 2.5.2.1,
/// 3.3.3.3): its CCCDs are saved with its bond and restored when it comes back and
/// encrypts with the bond, and a database changed while it was away is indicated to it
/// (Service Changed, the whole range) once it is back.
extension PeripheralManagerVirtualRadio {
    @Test("a bonded central's subscriptions survive a reconnect, and it is told of services added while it was away")
    func bondedCentralComesBack() async throws {
        let (central, address) = try await bondingCentral()
        defer { central.close() }
        let manager = try PeripheralManager(
            central: central, advertising: try PeripheralRadio.options(name: "BareBLE-PM-B"), services: Self.services())
        let events = EventReader(manager.events())
        try await manager.startAdvertising()
        let log = try PeripheralRadio.log.get()
        let name = try await bondingRadioCentral(log)
        try await PeripheralRadio.central(name, "connect \(address)")
        let battery = try #require(manager.database.characteristic(Self.batteryLevel)).valueHandle
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        #expect(try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))["paired"] as? Bool == true)
        _ = try await events.next("pairing") { event -> Bool? in if case .host(.paired(_, _, bondSaved: true)) = event { true } else { nil } }
        try await PeripheralRadio.central(name, "subscribe \(Self.batteryLevel.description)")
        try await PeripheralRadio.central(name, "subscribe 2A05 indicate")
        for _ in 0..<2 { _ = try await events.next("subscription") { event -> Bool? in if case .subscribed = event { true } else { nil } } }

        try await PeripheralRadio.central(name, "disconnect")
        _ = try await events.next("disconnection") { event -> Bool? in if case .host(.disconnected) = event { true } else { nil } }
        #expect(manager.store.subscribers(of: battery).isEmpty)
        // Changed while it is away: nobody connected is told.
        try manager.add([GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x181C)))])

        try await PeripheralRadio.central(name, "connect \(address)")
        let back = try await events.next("the central back") { event -> RemoteCentral? in if case let .host(.connected(link)) = event { link } else { nil } }
        #expect(manager.store.subscribers(of: battery)[back.handle] == nil, "nothing restored before encryption")
        // A CCCD written before it encrypts is not yet the bonded device's (anyone can use its
        // address): it must not replace the bond's saved state, which would lose the Service
        // Changed subscription and mark it change-aware (no indication below).
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        try await PeripheralRadio.central(name, "subscribe \(Self.batteryLevel.description)")
        _ = try await events.next("the unencrypted subscription") { event -> Bool? in if case .subscribed = event { true } else { nil } }
        // It has a key: the server asks for encryption (0x0F), not for pairing (0x05).
        let secret = try #require(manager.database.characteristic(Self.secret)).valueHandle
        #expect(try await PeripheralRadio.central(name, "read \(secret)")["error"] as? Int == 0x0F)
        #expect(try await PeripheralRadio.central(name, "encrypt")["encrypted"] as? Bool == true)
        _ = try await events.next("encryption") { event -> Bool? in if case .host(.encryptionChanged(_, true)) = event { true } else { nil } }
        #expect(manager.store.subscribers(of: battery)[back.handle] == .notification)
        let changed = try await events.next("Service Changed") { event -> (ClosedRange<UInt16>, Bool)? in
            if case let .serviceChanged(request, range, confirmed) = event, request.bearer == back.handle { (range, confirmed) } else { nil }
        }
        #expect(changed.0 == 0x0001...0xFFFF && changed.1)
        #expect(try await PeripheralRadio.central(name, "read \(secret)")["value"] as? String == Hex.string(Array("secret".utf8)).lowercased())
        let sent = manager.statistics.notificationsSent
        #expect(manager.updateValue([42], for: battery))
        #expect(manager.statistics.notificationsSent == sent + 1)
    }
}

extension PeripheralManagerVirtualRadio {
    /// A bonded central's CCCD writes are saved to the bond store before they are answered;
    /// one that writes the same CCCD over and over must not cost a file write (and fsync)
    /// each time.
    @Test("a bonded central rewriting its CCCD 20 times with the same value causes one save")
    func repeatedCCCDWritesSaveOnce() async throws {
        let (central, address) = try await bondingCentral()
        defer { central.close() }
        let manager = try PeripheralManager(
            central: central, advertising: try PeripheralRadio.options(name: "BareBLE-PM-S"), services: Self.services())
        let events = EventReader(manager.events())
        try await manager.startAdvertising()
        let log = try PeripheralRadio.log.get()
        let name = try await bondingRadioCentral(log)
        try await PeripheralRadio.central(name, "connect \(address)")
        #expect(try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))["paired"] as? Bool == true)
        _ = try await events.next("pairing") { event -> Bool? in if case .host(.paired(_, _, bondSaved: true)) = event { true } else { nil } }
        let cccd = try #require(manager.database.characteristic(Self.batteryLevel)?.clientCharacteristicConfigurationHandle)
        let before = manager.statistics.bondedStatesSaved
        for _ in 0..<20 {
            #expect(try await PeripheralRadio.central(name, "write \(cccd) 0100")["written"] as? Bool == true)
        }
        #expect(manager.statistics.bondedStatesSaved == before + 1)
        #expect(manager.statistics.bondedStateFailures == 0)
    }
}

extension PeripheralManagerVirtualRadio {
    /// The state lives in the bond store, not only in the manager: a new manager on the same
    /// controller and store (a restarted server) restores it.
    @Test("a bonded central's subscription comes back from the bond store after the server restarts")
    func bondedStateAcrossServerRestart() async throws {
        let (central, address) = try await bondingCentral()
        defer { central.close() }
        let log = try PeripheralRadio.log.get()
        let name = try await bondingRadioCentral(log)
        do {
            let first = try PeripheralManager(
                central: central, advertising: try PeripheralRadio.options(name: "BareBLE-PM-R1"), services: Self.services())
            let events = EventReader(first.events())
            try await first.startAdvertising()
            try await PeripheralRadio.central(name, "connect \(address)")
            try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
            #expect(try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))["paired"] as? Bool == true)
            _ = try await events.next("pairing") { event -> Bool? in if case .host(.paired(_, _, bondSaved: true)) = event { true } else { nil } }
            try await PeripheralRadio.central(name, "subscribe \(Self.batteryLevel.description)")
            _ = try await events.next("subscription") { event -> Bool? in if case .subscribed = event { true } else { nil } }
            try await PeripheralRadio.central(name, "disconnect")
            _ = try await events.next("disconnection") { event -> Bool? in if case .host(.disconnected) = event { true } else { nil } }
            await first.stopAdvertising()
        }
        let second = try PeripheralManager(
            central: central, advertising: try PeripheralRadio.options(name: "BareBLE-PM-R2"), services: Self.services())
        let events = EventReader(second.events())
        try await second.startAdvertising()
        try await PeripheralRadio.central(name, "connect \(address)")
        let back = try await events.next("the central back") { event -> RemoteCentral? in if case let .host(.connected(link)) = event { link } else { nil } }
        #expect(try await PeripheralRadio.central(name, "encrypt")["encrypted"] as? Bool == true)
        _ = try await events.next("encryption") { event -> Bool? in if case .host(.encryptionChanged(_, true)) = event { true } else { nil } }
        let battery = try #require(second.database.characteristic(Self.batteryLevel)).valueHandle
        #expect(second.store.subscribers(of: battery)[back.handle] == .notification)
        #expect(second.statistics.bondedStateFailures == 0)
    }
}

extension PeripheralManagerVirtualRadio {
    /// A Central whose bonds go to a fresh store, and its controller's address.
    func bondingCentral() async throws -> (Central, BluetoothAddress) {
        let central = try await PeripheralRadio.open()
        let address = try #require(central.controller.info?.address)
        central.security = SecurityPolicy(bonds: try BondStore(directory: PeripheralHostPairing.bondDirectory(), identity: .public(address)))
        return (central, address)
    }

    /// A new radio central that pairs Just Works over LE Secure Connections and bonds.
    func bondingRadioCentral(_ log: RadioEventLog) async throws -> String {
        let name = try await PeripheralRadio.addCentral()
        try await log.control("pairing \(name) io=no-input-no-output sc=1 mitm=0 bonding=1")
        return name
    }
}
