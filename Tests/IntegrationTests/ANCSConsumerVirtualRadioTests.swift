import ANCS
import ANCSConsumer
import BareBLE
import BluetoothCore
import Foundation
import Testing
import TestSupport

/// The consumer against the emulated iPhone (tools/virtual-radio "Emulated iPhone"): an
/// independent Notification Provider on Bumble that scans for our solicitation, connects
/// from a fresh RPA, pairs when refused, publishes ANCS only to an encrypted link and splits
/// Data Source answers at its 185-octet MTU.
@Suite(.serialized) struct ANCSConsumerVirtualRadio {
    static let radio = Result { try ANCSRadio() }

    @Test("every category is fetched with its attributes, and each app's name is asked once")
    func everyCategory() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        for category in 0..<12 {
            try await Self.radio.get().phone(phone, #"add {"category": \#(category), "title": "Title \#(category)", "message": "Message \#(category)"}"#)
        }
        try await Self.radio.get().phone(phone, #"add {"app": "com.apple.mobilephone", "category": 2, "title": "Mum"}"#)
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-1")
        defer { central.close() }
        let log = try Self.radio.get().log
        let mark = log.count
        try await Self.radio.get().phone(phone, "return")
        let told = try await events.notifications(13)
        #expect(told.map(\.event.category.description) == NotificationCategory.allNames + ["MissedCall"])
        #expect(told.allSatisfy { $0.event.kind == .added && $0.event.flags.contains(.preExisting) && $0.fetchFailure == nil })
        #expect(told.prefix(12).map { $0.attributes?.title } == (0..<12).map { "Title \($0)" })
        #expect(told.prefix(12).allSatisfy { $0.appName == "Messages" })
        #expect(told.last?.appName == "Phone")
        #expect(told.last?.attributes?.positiveActionLabel == "Dial Back")
        #expect(told.first?.attributes?.date?.description.hasPrefix("2025-01-02T03:") == true)
        // Read the log up to the last app command before counting them all.
        try await log.wait("ancs-command", timeout: .seconds(5)) { $0["peer"] as? String == phone && $0["app"] as? String == "com.apple.mobilephone" }
        let appCommands = log.events(since: mark).filter {
            $0["event"] as? String == "ancs-command" && $0["peer"] as? String == phone && $0["command"] as? String == "get-app-attributes"
        }
        #expect(appCommands.compactMap { $0["app"] as? String }.sorted() == ["com.apple.MobileSMS", "com.apple.mobilephone"])
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("a message several MTUs long is reassembled byte for byte; one added at run time comes too")
    func longMessageAndRunTimeAdd() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let message = (0..<1500).map { String(UnicodeScalar(UInt8(0x41 + $0 % 26))) }.joined() + " é✓"
        try await Self.radio.get().phone(phone, #"add {"title": "Long", "message": "\#(message)"}"#)
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-2")
        defer { central.close() }
        let log = try Self.radio.get().log
        try await Self.radio.get().phone(phone, "return")
        let long = try #require(try await events.notifications(1).first)
        #expect(long.attributes?.message == message)
        #expect(long.attributes?.messageSize == message.utf8.count)
        let data = try await log.wait("ancs-data", timeout: .seconds(5)) { $0["peer"] as? String == phone && ($0["bytes"] as? Int ?? 0) > 1500 }
        #expect((data["fragments"] as? Int ?? 0) >= 9)

        let ack = try await Self.radio.get().phone(phone, #"add {"category": "Email", "app": "com.apple.mobilemail", "title": "Invoice", "subtitle": "ACME"}"#)
        let added = try #require(try await events.notifications(1).first)
        #expect(added.event.uid == UInt32(try #require(ack["uid"] as? Int)))
        #expect(!added.event.flags.contains(.preExisting))
        #expect(added.attributes?.subtitle == "ACME")
        #expect(added.appName == "Mail")
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("a positive action is performed and the phone removes the notification")
    func actionRemoves() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let ack = try await Self.radio.get().phone(phone, #"add {"category": "IncomingCall", "app": "com.apple.mobilephone", "title": "Bob"}"#)
        let uid = UInt32(try #require(ack["uid"] as? Int))
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-3")
        defer { central.close() }
        try await Self.radio.get().phone(phone, "return")
        #expect(try await events.notifications(1).first?.attributes?.positiveActionLabel == "Answer")
        #expect(consumer.perform(.positive, uid: uid))
        // The phone sends Removed right after its Write Response: either may be told first.
        var finished: ANCSCommandFailure?? = .none
        var removed = false
        while finished == .none || !removed {
            let event = try await events.next("the action's outcome and the removal") { event -> ANCSConsumerEvent? in
                switch event {
                case let .actionFinished(done, .positive, _) where done == uid: event
                case let .notification(told) where told.event.kind == .removed && told.event.uid == uid: event
                default: nil
                }
            }
            if case let .actionFinished(_, _, failure) = event { finished = .some(failure) } else { removed = true }
        }
        #expect(finished == .some(nil))
        _ = try await Self.radio.get().log.wait("ancs-action", timeout: .seconds(5)) { $0["uid"] as? Int == Int(uid) }
        // The notification is gone: a second action is refused with Invalid Parameter.
        #expect(consumer.perform(.positive, uid: uid))
        let refused = try await events.next("refused action") { event -> ANCSCommandFailure?? in
            if case let .actionFinished(done, .positive, failure) = event, done == uid { failure } else { nil }
        }
        #expect(refused == .rejected(.invalidParameter))
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("the phone comes back from a new RPA: encrypted with the bond, no new pairing, notifications flow")
    func reconnectWithBond() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-4")
        defer { central.close() }
        let log = try Self.radio.get().log
        try await Self.radio.get().phone(phone, "return")
        try await events.pairedAndSubscribed()
        // The log is read as it is waited on: read it past the first pairing before the mark.
        try await log.wait("pairing-complete", timeout: .seconds(10)) { $0["peer"] as? String == phone }
        let mark = log.count
        let back = try await Self.radio.get().phone(phone, "reconnect", timeout: .seconds(90))
        #expect(back["own_address"] as? String != back["previous_own_address"] as? String)
        let newAddress = back["own_address"] as? String
        let encrypted = try await log.wait("encrypted", timeout: .seconds(30)) { $0["peer"] as? String == phone && $0["own_address"] as? String == newAddress }
        #expect(encrypted["using"] as? String == "bond")
        _ = try await events.subscribed()
        try await Self.radio.get().phone(phone, #"add {"title": "After"}"#)
        let after = try #require(try await events.notifications(1).first)
        #expect(after.attributes?.title == "After")
        #expect(!log.events(since: mark).contains { $0["event"] as? String == "pairing-complete" })
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("the phone goes away and comes back: what arrived meanwhile is told at the return, with the bond")
    func awayAndBack() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-6")
        defer { central.close() }
        let log = try Self.radio.get().log
        try await Self.radio.get().phone(phone, "return")
        try await events.pairedAndSubscribed()
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        _ = try await events.next("the phone gone") { event -> Bool? in if case .disconnected = event { true } else { nil } }
        let ack = try await Self.radio.get().phone(phone, #"add {"category": "Email", "app": "com.apple.mobilemail", "title": "While away"}"#)
        let uid = UInt32(try #require(ack["uid"] as? Int))
        try await log.wait("pairing-complete", timeout: .seconds(10)) { $0["peer"] as? String == phone }
        let mark = log.count
        try await Self.radio.get().phone(phone, "return")
        let told = try await events.next("the notification from while away") { event -> ANCSNotification? in
            if case let .notification(notification) = event, notification.event.uid == uid { notification } else { nil }
        }
        #expect(told.event.flags.contains(.preExisting))
        #expect(told.attributes?.title == "While away" && told.appName == "Mail")
        let encrypted = try await log.wait("encrypted", timeout: .seconds(10)) { $0["peer"] as? String == phone && $0["using"] as? String == "bond" }
        #expect(encrypted["using"] as? String == "bond")
        #expect(!log.events(since: mark).contains { $0["event"] as? String == "pairing-complete" })
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("a phone that leaves the MTU exchange to us is asked, and a bundle identifier longer than a write still gets its name")
    func consumerExchangesTheMTU() async throws {
        let phone = try await Self.radio.get().addPhone("present=0 exchange=0")
        // 212 octets: its Get App Attributes (215) is longer than ATT_MTU - 3 even at 185.
        let app = "com.example." + String(repeating: "long", count: 50)
        try await Self.radio.get().phone(phone, "app \(app) Long Name")
        try await Self.radio.get().phone(phone, #"add {"app": "\#(app)", "title": "Hi"}"#)
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-7")
        defer { central.close() }
        let log = try Self.radio.get().log
        try await Self.radio.get().phone(phone, "return")
        let told = try #require(try await events.notifications(1).first)
        #expect(told.attributes?.appIdentifier == app)
        #expect(told.appName == "Long Name")
        let mtu = try await log.wait("mtu", timeout: .seconds(5)) { $0["peer"] as? String == phone }
        #expect(mtu["mtu"] as? Int == 185)
        let asked = try await log.wait("ancs-command", timeout: .seconds(5)) {
            $0["peer"] as? String == phone && $0["command"] as? String == "get-app-attributes"
        }
        #expect(asked["app"] as? String == app)
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }

    @Test("now-playing follows the phone's media, and a pause goes to its media app")
    func media() async throws {
        let phone = try await Self.radio.get().addPhone("present=0")
        let (central, consumer, events) = try await Self.radio.get().consumer(name: "BareBLE-ANCS-5")
        defer { central.close() }
        try await Self.radio.get().phone(phone, "return")
        #expect(try await events.subscribed())
        try await Self.radio.get().phone(phone, #"media {"state": 1, "title": "So What", "artist": "Miles Davis", "album": "Kind of Blue", "elapsed": 12.5}"#)
        let playing = try await events.next("now playing") { event -> AMSNowPlaying? in
            if case let .nowPlaying(playing) = event, playing.title == "So What", playing.album == "Kind of Blue", playing.playbackInfo?.state == .playing { playing } else { nil }
        }
        #expect(playing.artist == "Miles Davis")
        try await consumer.media(.pause)
        _ = try await Self.radio.get().log.wait("media-command", timeout: .seconds(5)) { $0["command"] as? String == "pause" }
        try await Self.radio.get().phone(phone, "leave", timeout: .seconds(30))
        await consumer.stop()
    }
}

extension NotificationCategory {
    static let allNames = (0..<12).map { NotificationCategory(rawValue: UInt8($0)).description }
}
