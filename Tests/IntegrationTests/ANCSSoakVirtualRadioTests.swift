import ANCS
@testable import ANCSConsumer
import BareBLE
import Foundation
import Testing
import TestSupport

/// The phone leaves and comes back again and again (a new RPA each time, the same bond):
/// after every return the consumer is subscribed again without pairing and a notification
/// added then is told. `BAREBLE_ANCS_SOAK_CYCLES` sets the cycles (20 by default; 200 for
/// the soak figures in specs/ancs.md).
@Suite(.serialized) struct ANCSSoakVirtualRadio {
    static let radio = Result { try ANCSRadio() }

    @Test("reconnect cycles: no pairing after the first, no notification missed")
    func reconnectCycles() async throws {
        let cycles = ProcessInfo.processInfo.environment["BAREBLE_ANCS_SOAK_CYCLES"].flatMap(Int.init) ?? 20
        let phone = try await Self.radio.get().addPhone("present=0")
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-S")
        defer { central.close() }
        let log = try Self.radio.get().log
        try await Self.radio.get().phone(phone, "return")
        try await events.pairedAndSubscribed()
        try await log.wait("pairing-complete", timeout: .seconds(10)) { $0["peer"] as? String == phone }
        let mark = log.count
        var rssAfterWarmUp = 0
        var missed = 0
        for cycle in 1...cycles {
            try await Self.radio.get().phone(phone, "reconnect", timeout: .seconds(90))
            _ = try await events.subscribed()
            let ack = try await Self.radio.get().phone(phone, #"add {"title": "cycle \#(cycle)"}"#)
            let uid = UInt32(try #require(ack["uid"] as? Int))
            let told = try await events.next("cycle \(cycle)'s notification") { event -> ANCSNotification? in
                if case let .notification(notification) = event, notification.event.uid == uid, notification.event.kind == .added { notification } else { nil }
            }
            if told.attributes?.title != "cycle \(cycle)" { missed += 1 }
            try await Self.radio.get().phone(phone, "remove \(uid)")
            if cycle == min(10, cycles) { rssAfterWarmUp = ToolProcess.residentKilobytes(of: "self") }
        }
        let rssAtEnd = ToolProcess.residentKilobytes(of: "self")
        // The test process's RSS holds the radio event log, which keeps every line (~100 kB a
        // cycle here): the consumer's own memory is measured on the tool's process
        // (PeripheralToolVirtualRadio's reconnect test, and specs/ancs.md).
        print("ANCS soak: \(cycles) cycles, test process RSS (with the radio log) after warm-up \(rssAfterWarmUp) kB, at the end \(rssAtEnd) kB, missed \(missed)")
        #expect(missed == 0)
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        _ = try await log.wait("disconnected", timeout: .seconds(30)) { $0["peer"] as? String == phone }
        _ = try await events.next("the phone's last disconnection") { event -> Bool? in if case .disconnected = event { true } else { nil } }
        // Told last, after every layer below let the link go: nothing of any cycle's link stays.
        #expect(consumer.state.withLock { $0.links.isEmpty })
        #expect(central.linkLeftovers + consumer.manager.linkLeftovers == [])
        #expect(!log.events(since: mark).contains { $0["event"] as? String == "pairing-complete" && $0["peer"] as? String == phone })
        await consumer.stop()
    }
}
