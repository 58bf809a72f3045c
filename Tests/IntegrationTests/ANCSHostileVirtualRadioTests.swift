import ANCS
import ANCSConsumer
import BareBLE
import BluetoothCore
import Foundation
import Testing
import TestSupport

/// A hostile Notification Provider (the emulated iPhone's `hostile` modes, `sharing off`,
/// `burst`): every case ends in a typed failure or problem, the consumer keeps working,
/// and what it holds stays bounded.
@Suite(.serialized) struct ANCSHostileVirtualRadio {
    static let radio = Result { try ANCSRadio() }

    /// Short enough that the modes which never complete end quickly, long enough that an
    /// answer the phone does send arrives under a loaded CI machine (2 s did not).
    static let session = ANCSSessionConfiguration(commandTimeout: .seconds(5))

    @Test("broken Data Source answers end in typed failures and the next notification still comes")
    func brokenAnswers() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-H1", session: Self.session)
        defer { central.close() }
        try await Self.radio.get().phone(phone, "return")
        _ = try await events.subscribed()
        // Asked once and cached, so each mode below breaks a notification's answer.
        try await Self.radio.get().phone(phone, #"add {"title": "warm-up"}"#)
        #expect(try await events.notifications(1).first?.appName == "Messages")

        let cases: [(mode: String, failure: @Sendable (UInt32) -> ANCSCommandFailure, problem: (@Sendable (UInt32) -> ANCSProblem)?)] = [
            ("incomplete", { _ in .timedOut(missingAttributes: [7]) }, nil),
            ("wrong-uid", { _ in .timedOut(missingAttributes: Array(0...7)) }, { uid in .dataSource(.otherNotification(expected: uid, received: uid + 1)) }),
            ("length-overrun", { _ in .malformed(.attributeTooLong(attribute: 0, length: 65535, maximum: DataSourceRequest.implicitMaximumLength)) },
             { _ in .dataSource(.attributeTooLong(attribute: 0, length: 65535, maximum: DataSourceRequest.implicitMaximumLength)) }),
            ("unknown-command", { _ in .timedOut(missingAttributes: Array(0...7)) }, { _ in .dataSource(.otherCommand(expected: 0, received: 0x7F)) }),
        ]
        for (mode, failure, problem) in cases {
            try await Self.radio.get().phone(phone, "hostile \(mode)")
            let ack = try await Self.radio.get().phone(phone, #"add {"title": "\#(mode)"}"#)
            let uid = UInt32(try #require(ack["uid"] as? Int))
            var told: ANCSNotification?
            var problems: [ANCSProblem] = []
            while told == nil {
                let event = try await events.next("\(mode): the notification") { event -> ANCSConsumerEvent? in
                    switch event {
                    case .problem: event
                    case let .notification(notification) where notification.event.uid == uid: event
                    default: nil
                    }
                }
                if case let .notification(notification) = event { told = notification }
                if case let .problem(found) = event { problems.append(found) }
            }
            #expect(told?.fetchFailure == failure(uid), "\(mode)")
            if let problem { #expect(problems.contains(problem(uid)), "\(mode): \(problems)") }
        }
        try await Self.radio.get().phone(phone, #"add {"title": "after"}"#)
        let after = try #require(try await events.notifications(1).first)
        #expect(after.attributes?.title == "after" && after.fetchFailure == nil)
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("sharing off: every command is refused with 0x03 and the user is told what to do once")
    func sharingOff() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        try await Self.radio.get().phone(phone, "sharing off")
        try await Self.radio.get().phone(phone, #"add {"title": "one"}"#)
        try await Self.radio.get().phone(phone, #"add {"title": "two"}"#)
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-H2", session: Self.session)
        defer { central.close() }
        try await Self.radio.get().phone(phone, "return")
        var failures: [ANCSCommandFailure?] = []
        var advice = 0
        while failures.count < 2 {
            let event = try await events.next("refused notifications") { event -> ANCSConsumerEvent? in
                switch event {
                case .problem(.notificationSharingNotAllowed), .notification: event
                default: nil
                }
            }
            if case let .notification(notification) = event { failures.append(notification.fetchFailure) } else { advice += 1 }
        }
        #expect(failures == [.rejected(.notificationSharingNotAllowed), .rejected(.notificationSharingNotAllowed)])
        #expect(advice == 1)
        #expect(ANCSProblem.notificationSharingNotAllowed.description.contains("Share System Notifications"))
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("10,000 notifications in a burst: each told once, the queue bounded, the link still works")
    func burst() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-H3", session: ANCSSessionConfiguration(maximumPendingNotifications: 256))
        defer { central.close() }
        try await Self.radio.get().phone(phone, "return")
        _ = try await events.subscribed()
        // The phone sends as the link takes them and acknowledges with the last, so the
        // events are read meanwhile: the consumer keeps 1,024 unread, then drops them.
        let radio = try Self.radio.get()
        let burst = Task { try await radio.phone(phone, "burst 10000", timeout: .seconds(240))["first"] as? Int }
        let tally = BurstTally()
        let counted: (told: Int, skipped: Int)
        do {
            counted = try await events.next("every burst notification told", timeout: .seconds(240)) { tally.take($0) }
        } catch {
            burst.cancel()
            Issue.record("\(tally.told) told, \(consumer.droppedEvents) events dropped, \(tally.drops.count) disconnections")
            throw error
        }
        let first = try #require(try await burst.value)
        #expect(tally.uids == first..<first + 10_000, "the phone held no other notification: each told is the burst's")
        #expect(consumer.droppedEvents == 0)
        #expect(counted.told == 10_000)
        // A drop makes the phone re-send what it holds as pre-existing on the new
        // subscription (as iOS does): the drops say whether that is how a UID came twice.
        #expect(tally.toldTwice == 0, "the link dropped \(tally.drops.count) times during the burst: \(tally.drops.prefix(4))")
        #expect(counted.skipped > 0, "a burst of 10,000 against a queue of 256 skips some")
        try await Self.radio.get().phone(phone, #"add {"title": "after the burst"}"#)
        let after = try await events.next("the notification after the burst", timeout: .seconds(60)) { event -> ANCSNotification? in
            if case let .notification(notification) = event, notification.attributes?.title == "after the burst" { notification } else { nil }
        }
        #expect(after.fetchFailure == nil)
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }
}

/// Counts the burst's notifications as they are told (each UID once), for a matcher that
/// runs once per event.
final class BurstTally: Sendable {
    private let seen = Lock<(uids: Set<Int>, skipped: Int, twice: Int, drops: [String])>(([], 0, 0, []))

    var toldTwice: Int { seen.withLock { $0.twice } }
    var told: Int { seen.withLock { $0.uids.count } }
    /// The lowest to the highest UID told (empty when none was).
    var uids: Range<Int> {
        seen.withLock { seen in
            guard let low = seen.uids.min(), let high = seen.uids.max() else { return 0..<0 }
            return low..<high + 1
        }
    }
    /// The disconnections seen while counting, with their reasons.
    var drops: [String] { seen.withLock { $0.drops } }

    func take(_ event: ANCSConsumerEvent) -> (told: Int, skipped: Int)? {
        if case let .disconnected(_, _, reason) = event {
            seen.withLock { $0.drops.append(reason) }
            return nil
        }
        guard case let .notification(notification) = event, notification.event.kind == .added else { return nil }
        let uid = Int(notification.event.uid)
        let (count, skipped) = seen.withLock { seen in
            if !seen.uids.insert(uid).inserted { seen.twice += 1 }
            if notification.fetchFailure == .skipped { seen.skipped += 1 }
            return (seen.uids.count, seen.skipped)
        }
        return count == 10_000 ? (count, skipped) : nil
    }
}
