import BareBLE
import BluetoothCore
import GATT
import Testing
import TestSupport

/// `updateValue` with back-pressure: a burst faster than the controller returns credits
/// meets L2CAP's bound for the link, is refused (false) instead of queued without end, and
/// the ready event says when to go on (`peripheralManagerIsReady(toUpdateSubscribers:)`).
extension PeripheralManagerVirtualRadio {
    /// Waits for the ready event and sends `value`; again while it is refused. A ready
    /// event may have come during the burst, when a credit or a confirmation made room
    /// that the burst then filled: that one is stale by the time it is read, and the
    /// refusal arms the next.
    static func sentOnceReady(_ value: [UInt8], for handle: UInt16, _ served: Served) async throws -> Bool {
        for _ in 0..<50 {
            _ = try await served.events.next("ready", timeout: .seconds(30)) { event -> Bool? in
                if case .readyToUpdateSubscribers = event { true } else { nil }
            }
            if served.manager.updateValue(value, for: handle) { return true }
        }
        return false
    }

    @Test("a burst of notifications is refused at L2CAP's bound, then the ready event comes and updates go again")
    func notificationBackPressure() async throws {
        let served = try await serve("BareBLE-PM-BP")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let battery = try #require(manager.database.characteristic(Self.batteryLevel)).valueHandle
        try await PeripheralRadio.central(name, "subscribe \(Self.batteryLevel.description)")
        _ = try await served.events.next("subscription") { event -> Bool? in if case .subscribed = event { true } else { nil } }

        // Synchronous, so no credit can be taken back in between beyond what the reader
        // thread manages meanwhile: far more than the 256 PDUs L2CAP keeps for a link.
        var accepted = 0, refused = 0
        for index in 0..<2_000 {
            if manager.updateValue([UInt8(truncatingIfNeeded: index)], for: battery) { accepted += 1 } else { refused += 1 }
        }
        #expect(refused > 0)
        #expect(accepted >= 256)
        #expect(manager.statistics.notificationsRefusedFull == refused)
        #expect(manager.statistics.notificationsSent == accepted)
        #expect(try await Self.sentOnceReady([0xEE], for: battery, served))
        _ = try await PeripheralRadio.log.get().wait("notification", timeout: .seconds(30)) { $0["peer"] as? String == name && $0["value"] as? String == "ee" }
        #expect(served.link.isConnected)
    }
}

extension PeripheralManagerVirtualRadio {
    @Test("indications beyond the one outstanding and the server's queue are refused, then the ready event comes")
    func indicationBackPressure() async throws {
        let served = try await serve("BareBLE-PM-IB")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let counter = try #require(manager.database.characteristic(Self.counter)).valueHandle
        try await PeripheralRadio.central(name, "subscribe \(Self.counter.uuidString128) indicate")
        _ = try await served.events.next("subscription") { event -> Bool? in if case .subscribed = event { true } else { nil } }

        var accepted = 0, refused = 0
        for index in 0..<100 {
            if manager.updateValue([UInt8(index)], for: counter) { accepted += 1 } else { refused += 1 }
        }
        // One outstanding plus the server's queue of 32; a confirmation may free a place
        // during the loop, never more than the loop lasts.
        #expect(accepted >= 33 && refused > 0)
        #expect(manager.statistics.indicationsRefusedFull == refused)
        #expect(try await Self.sentOnceReady([0xEE], for: counter, served))
        _ = try await PeripheralRadio.log.get().wait("notification", timeout: .seconds(30)) { $0["peer"] as? String == name && $0["value"] as? String == "ee" }
        #expect(manager.statistics.indicationsFailed == 0)
    }
}
