import ANCS
import Testing

/// Scripted conversations between a Notification Provider (the lines the test feeds) and
/// the session (the writes and notifications it answers with).
@Suite struct SessionConversationTests {
    let second: UInt64 = 1_000_000_000
    let fetchUID1 = ControlPointCommand.getNotificationAttributes(uid: 1, attributes: ANCSSessionConfiguration().attributes).bytes

    func writes(_ outputs: [ANCSSessionOutput]) -> [[UInt8]] {
        outputs.compactMap { if case let .writeControlPoint(bytes) = $0 { bytes } else { nil } }
    }

    func notifications(_ outputs: [ANCSSessionOutput]) -> [ANCSNotification] {
        outputs.compactMap { if case let .notification(notification) = $0 { notification } else { nil } }
    }

    @Test func addedNotificationIsFetchedWithItsAppNameWhichIsCached() {
        var session = ANCSSession()
        var out = session.handle(.notificationSource(ANCSWire.event(0, uid: 1, category: 4, flags: 0x04)), now: 0)
        #expect(writes(out) == [fetchUID1])
        out = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        #expect(out.isEmpty)
        for fragment in ANCSWire.fragments(ANCSWire.fullAnswer(uid: 1, message: String(repeating: "x", count: 400))) {
            out = session.handle(.dataSource(fragment), now: 0)
        }
        #expect(writes(out) == [ControlPointCommand.getAppAttributes(appIdentifier: "com.apple.MobileSMS", attributes: [.displayName]).bytes])
        #expect(notifications(out).isEmpty)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        out = session.handle(.dataSource(ANCSWire.appAnswer(app: "com.apple.MobileSMS", displayName: "Messages")), now: 0)
        let told = notifications(out)
        #expect(told.count == 1)
        #expect(told.first?.event.flags == [.preExisting])
        #expect(told.first?.appName == "Messages")
        #expect(told.first?.attributes?.title == "Ann")
        #expect(told.first?.attributes?.message?.count == 400)
        #expect(told.first?.attributes?.date?.description == "2025-01-02T03:04:05")
        // A second notification from the same app: no second Get App Attributes.
        out = session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        out = session.handle(.dataSource(ANCSWire.fullAnswer(uid: 2)), now: 0)
        #expect(writes(out).isEmpty)
        #expect(notifications(out).map(\.appName) == ["Messages"])
        #expect(session.nextDeadline == nil)
    }

    @Test func answerBeforeTheWriteResponseCompletesOnTheWriteResponse() {
        var session = ANCSSession(appNames: cached("com.apple.MobileSMS", "Messages"))
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0)
        #expect(session.handle(.dataSource(ANCSWire.fullAnswer(uid: 1)), now: 0).isEmpty)
        let out = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        #expect(notifications(out).map(\.event.uid) == [1])
    }

    @Test func modifiedBeforeItsFetchIsOneAddWithTheLatestState() {
        var session = ANCSSession(appNames: cached("com.apple.MobileSMS", "Messages"))
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0)
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 2, count: 1)), now: 0)
        _ = session.handle(.notificationSource(ANCSWire.event(1, uid: 2, count: 5)), now: 0)
        #expect(session.pendingNotifications == 2)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        _ = session.handle(.dataSource(ANCSWire.fullAnswer(uid: 1)), now: 0)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        let out = session.handle(.dataSource(ANCSWire.fullAnswer(uid: 2)), now: 0)
        #expect(notifications(out).map(\.event.kind) == [.added])
        #expect(notifications(out).map(\.event.categoryCount) == [5])
    }

    @Test func removalCancelsQueuedAndInFlightFetches() {
        var session = ANCSSession()
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0)
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0)
        var out = session.handle(.notificationSource(ANCSWire.event(2, uid: 2)), now: 0)
        #expect(notifications(out).map(\.fetchFailure) == [.removedBeforeFetch, nil])
        #expect(notifications(out).map(\.event.kind) == [.added, .removed])
        out = session.handle(.notificationSource(ANCSWire.event(2, uid: 1)), now: 0)
        #expect(notifications(out).map(\.fetchFailure) == [.removedBeforeFetch, nil])
        // The in-flight answer still arrives: consumed quietly, nothing told twice.
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        out = session.handle(.dataSource(ANCSWire.fullAnswer(uid: 1)), now: 0)
        #expect(out.isEmpty)
        #expect(session.counters.strayDataSource == 0)
        #expect(session.counters.failedCommands == 0)
        #expect(session.nextDeadline == nil)
    }

    @Test func actionsGoFirstAndTheirOutcomeIsTold() {
        var session = ANCSSession()
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0)
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0)
        _ = session.handle(.performAction(uid: 7, action: .positive), now: 0)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        var out = session.handle(.dataSource(ANCSWire.notificationAnswer(uid: 1, [(0, []), (1, []), (2, []), (3, []), (4, []), (5, []), (6, []), (7, [])])), now: 0)
        #expect(writes(out) == [[0x02, 7, 0, 0, 0, 0x00]])
        out = session.handle(.controlPointWriteResult(attErrorCode: 0xA3), now: 0)
        #expect(out.first == .actionFinished(uid: 7, action: .positive, failure: .rejected(.actionFailed)))
        #expect(writes(out).first?.prefix(5) == [0, 2, 0, 0, 0])
    }

    @Test func tooManyActionsAreRefusedAtOnce() {
        var session = ANCSSession(configuration: ANCSSessionConfiguration(maximumPendingActions: 2))
        var refused: [ANCSSessionOutput] = []
        for uid in 0..<UInt32(4) { refused += session.handle(.performAction(uid: uid, action: .negative), now: 0).filter { if case .actionFinished = $0 { true } else { false } } }
        // The first is written at once; two wait; the fourth is refused.
        #expect(refused == [.actionFinished(uid: 3, action: .negative, failure: .queueFull)])
    }

    @Test func appNameTimeoutFallsBackToTheBundleIdentifierOnce() {
        var session = ANCSSession()
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
        _ = session.handle(.dataSource(ANCSWire.fullAnswer(uid: 1, app: "com.example.chat")), now: 0)
        _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 1)
        #expect(session.nextDeadline == 10 * second)
        let out = session.handle(.tick, now: 10 * second)
        #expect(notifications(out).map(\.appName) == ["com.example.chat"])
        #expect(out.contains(.problem(.appNameUnavailable(appIdentifier: "com.example.chat", failure: .timedOut(missingAttributes: [0])))))
        #expect(session.appNames["com.example.chat"]?.isFallback == true)
        // The next link asks again.
        #expect(session.appNames.removingFallbacks()["com.example.chat"] == nil)
    }

    @Test func aWriteGivenUpOnHoldsTheNextCommandUntilItIsAnswered() {
        var session = ANCSSession()
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0)
        _ = session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0)
        var out = session.handle(.tick, now: 10 * second)
        #expect(notifications(out).first?.fetchFailure == .timedOut(missingAttributes: [0, 1, 2, 3, 4, 5, 6, 7]))
        #expect(writes(out).isEmpty)
        // The late answer to the first write frees the Control Point; it completes nothing.
        out = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 11 * second)
        #expect(writes(out).count == 1)
        #expect(notifications(out).isEmpty)
    }

    @Test func disconnectionTellsEverythingWaiting() {
        var session = ANCSSession()
        for uid in 1...3 as ClosedRange<UInt32> { _ = session.handle(.notificationSource(ANCSWire.event(0, uid: uid)), now: 0) }
        _ = session.handle(.performAction(uid: 9, action: .positive), now: 0)
        let out = session.handle(.disconnected, now: 0)
        #expect(notifications(out).map(\.event.uid) == [1, 2, 3])
        #expect(notifications(out).allSatisfy { $0.fetchFailure == .disconnected })
        #expect(out.contains(.actionFinished(uid: 9, action: .positive, failure: .disconnected)))
        #expect(session.handle(.notificationSource(ANCSWire.event(0, uid: 4)), now: 0).isEmpty)
    }

    func cached(_ app: String, _ name: String) -> AppNameCache {
        var cache = AppNameCache()
        cache.insert(.init(name: name, isFallback: false), for: app)
        return cache
    }
}
