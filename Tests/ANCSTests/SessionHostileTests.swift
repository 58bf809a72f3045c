import ANCS
import Testing

/// A hostile Notification Provider against the whole session: every case ends in typed
/// outputs, bounded state, and every added notification told once.
@Suite struct SessionHostileTests {
    let second: UInt64 = 1_000_000_000

    /// Counts the notifications told, by UID, and whether each had attributes.
    struct Tally {
        var told: [UInt32: Int] = [:]
        var writes: [[UInt8]] = []
        var problems: [ANCSProblem] = []
        var failures: [UInt32: ANCSCommandFailure] = [:]

        mutating func take(_ outputs: [ANCSSessionOutput]) {
            for output in outputs {
                switch output {
                case let .writeControlPoint(bytes): writes.append(bytes)
                case let .notification(notification) where notification.event.kind != .removed:
                    told[notification.event.uid, default: 0] += 1
                    if let failure = notification.fetchFailure { failures[notification.event.uid] = failure }
                case let .problem(problem): problems.append(problem)
                default: break
                }
            }
        }
    }

    @Test func tenThousandAddsInABurstStayBoundedAndEveryOneIsTold() {
        var session = ANCSSession(configuration: ANCSSessionConfiguration(maximumPendingNotifications: 64))
        var tally = Tally()
        for uid in 0..<UInt32(10_000) {
            tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: uid)), now: 0))
            #expect(session.pendingNotifications <= 64)
        }
        // One command in flight (UID 0), 63 queued, the rest skipped and counted.
        #expect(tally.writes.count == 1)
        #expect(session.counters.skippedFetches == 10_000 - 64)
        #expect(tally.told.count == 10_000 - 64)
        #expect(tally.failures.values.allSatisfy { $0 == .skipped })
        // The phone never answers: each remaining command times out in turn, and is told.
        var now: UInt64 = 0
        while let deadline = session.nextDeadline {
            now = deadline
            tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: now))
            tally.take(session.handle(.tick, now: now))
        }
        #expect(tally.told.count == 10_000)
        #expect(tally.told.values.allSatisfy { $0 == 1 })
        #expect(session.pendingNotifications == 0)
    }

    @Test func fragmentsThatNeverCompleteTimeOutAndTheNextCommandGoes() {
        var session = ANCSSession()
        var tally = Tally()
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0))
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0))
        tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0))
        let answer = ANCSWire.fullAnswer(uid: 1, message: String(repeating: "m", count: 600))
        tally.take(session.handle(.dataSource(Array(answer.prefix(300))), now: 1))
        #expect(tally.writes.count == 1)
        tally.take(session.handle(.tick, now: 10 * second - 1))
        #expect(tally.told[1] == nil)
        tally.take(session.handle(.tick, now: 10 * second))
        #expect(tally.failures[1] == .timedOut(missingAttributes: [3, 4, 5, 6, 7]))
        #expect(tally.writes.count == 2)
        #expect(session.counters.failedCommands == 1)
        // The rest of the abandoned answer arrives late: dropped as a stray, UID 2 still waits.
        tally.take(session.handle(.dataSource(Array(answer.dropFirst(300))), now: 10 * second + 1))
        #expect(session.counters.strayDataSource == 1)
        #expect(session.nextDeadline == 20 * second)
    }

    @Test func answerForAnotherUIDDoesNotCompleteTheFetch() {
        var session = ANCSSession()
        var tally = Tally()
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0))
        tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0))
        tally.take(session.handle(.dataSource(ANCSWire.fullAnswer(uid: 99)), now: 0))
        #expect(tally.told.isEmpty)
        #expect(tally.problems == [.dataSource(.otherNotification(expected: 1, received: 99))])
        tally.take(session.handle(.dataSource(ANCSWire.fullAnswer(uid: 1)), now: 0))
        // The app's name is asked next; the notification waits for it.
        #expect(tally.writes.last == [1] + Array("com.apple.MobileSMS".utf8) + [0, 0])
    }

    @Test func lengthsPastTheDataEndTheAnswerWithATypedFailure() {
        var session = ANCSSession(configuration: ANCSSessionConfiguration(titleLength: 8))
        var tally = Tally()
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 5)), now: 0))
        tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0))
        let answer = ANCSWire.notificationAnswer(uid: 5, [(0, [0x61]), (1, Array("far too long a title".utf8))])
        tally.take(session.handle(.dataSource(answer), now: 0))
        #expect(tally.failures[5] == .malformed(.attributeTooLong(attribute: 1, length: 20, maximum: 8)))
        #expect(session.nextDeadline == nil)
    }

    @Test func unknownCommandReplyIsATypedFailureAndTheQueueMovesOn() {
        var session = ANCSSession()
        var tally = Tally()
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0))
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0))
        tally.take(session.handle(.controlPointWriteResult(attErrorCode: 0xA0), now: 0))
        #expect(tally.failures[1] == .rejected(.unknownCommand))
        #expect(tally.writes.count == 2)
    }

    @Test func writeNotPermittedSaysWhatToDoOnThePhoneOnce() {
        var session = ANCSSession()
        var tally = Tally()
        for uid in 1...3 as ClosedRange<UInt32> { tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: uid)), now: 0)) }
        for _ in 1...3 { tally.take(session.handle(.controlPointWriteResult(attErrorCode: 0x03), now: 0)) }
        #expect(tally.problems == [.notificationSharingNotAllowed])
        #expect(tally.failures.values.allSatisfy { $0 == .rejected(.notificationSharingNotAllowed) })
        #expect(tally.told.count == 3)
        let advice = ANCSProblem.notificationSharingNotAllowed.description
        #expect(advice.contains("Settings > Bluetooth"))
        #expect(advice.contains("Share System Notifications"))
    }

    @Test func malformedNotificationSourceIsCountedNotTrapped() {
        var session = ANCSSession()
        let outputs = session.handle(.notificationSource([0, 0, 1]), now: 0) + session.handle(.notificationSource([9, 0, 0, 0, 1, 0, 0, 0]), now: 0)
        #expect(outputs == [.problem(.notificationSource(.truncated(length: 3))), .problem(.notificationSource(.unknownEventID(9)))])
        #expect(session.counters.malformedNotificationSource == 2)
    }

    @Test func writeResultsWithNoWriteAreCounted() {
        var session = ANCSSession()
        #expect(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0).isEmpty)
        #expect(session.counters.strayWriteResults == 1)
    }

    @Test func manyAppsNeverGrowTheNameCachePastItsCapacity() {
        var session = ANCSSession(appNames: AppNameCache(capacity: 4))
        for uid in 0..<UInt32(20) {
            _ = session.handle(.notificationSource(ANCSWire.event(0, uid: uid)), now: 0)
            _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
            _ = session.handle(.dataSource(ANCSWire.fullAnswer(uid: uid, app: "app\(uid)")), now: 0)
            _ = session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0)
            _ = session.handle(.dataSource(ANCSWire.appAnswer(app: "app\(uid)", displayName: "App \(uid)")), now: 0)
        }
        #expect(session.appNames.count == 4)
        #expect(session.appNames.evictions == 16)
        #expect(session.appNames["app19"]?.name == "App 19")
    }

    /// A bundle identifier too long for any Control Point write (512 octets) is not asked
    /// about: the notification is told at once under its identifier, nothing is written
    /// (the write would fail here, not at the phone, and read as the phone refusing it).
    @Test func anAppIdentifierTooLongToAskAboutIsToldWithoutAsking() {
        var session = ANCSSession()
        var tally = Tally()
        var names: [String?] = []
        let longest = String(repeating: "a", count: 509)  // 0x01, 509 octets, NUL, 0x00: 512
        for (uid, app) in [(UInt32(1), longest + "b"), (2, longest)] {
            tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: uid)), now: 0))
            tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 0))
            let outputs = session.handle(.dataSource(ANCSWire.fullAnswer(uid: uid, app: app)), now: 0)
            names += outputs.compactMap { if case let .notification(told) = $0 { told.appName } else { nil } }
            tally.take(outputs)
        }
        #expect(names == [longest + "b"])
        #expect(tally.told[1] == 1 && tally.told[2] == nil)
        // The second fits exactly: its Get App Attributes is the last write, 512 octets.
        #expect(tally.writes.count == 3)
        #expect(tally.writes.last?.count == ControlPointCommand.maximumLength)
        #expect(tally.writes.last?.first == 0x01)
        #expect(tally.problems.isEmpty)
    }

    /// The whole answer came but the Write Response did not by the deadline: the phone
    /// performed the command, so the notification is told with its attributes (before:
    /// "timed out" with nothing missing). The Control Point stays closed until the write
    /// is answered: the next command waits for it.
    @Test func aCompleteAnswerWhoseWriteResponseIsLateIsStillTold() {
        var session = ANCSSession()
        var tally = Tally()
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 1)), now: 0))
        tally.take(session.handle(.notificationSource(ANCSWire.event(0, uid: 2)), now: 0))
        tally.take(session.handle(.dataSource(ANCSWire.fullAnswer(uid: 1, app: "com.apple.MobileSMS")), now: 1))
        tally.take(session.handle(.tick, now: 10 * second))
        #expect(tally.failures[1] == nil)
        #expect(tally.writes.count == 1)
        // Its app's name is asked once the write is answered, then UID 2 is fetched.
        tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 10 * second + 1))
        #expect(tally.writes.count == 2 && tally.writes.last?.first == 0x01)
        tally.take(session.handle(.controlPointWriteResult(attErrorCode: nil), now: 10 * second + 2))
        tally.take(session.handle(.dataSource(ANCSWire.appAnswer(app: "com.apple.MobileSMS", displayName: "Messages")), now: 10 * second + 3))
        #expect(tally.told[1] == 1)
        #expect(tally.writes.count == 3 && tally.writes.last?.first == 0x00)
        #expect(session.counters.failedCommands == 0)
        #expect(session.counters.strayWriteResults == 0)
    }
}
