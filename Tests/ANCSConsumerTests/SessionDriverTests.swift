import ANCS
@testable import ANCSConsumer
import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// The session driven over a real ATT client (a scripted phone on the bearer) and the
/// real deadline timer: Control Point writes go out as Write Requests, the phone's answers
/// and silences come back as the session's inputs.
@Suite struct SessionDriverTests {
    /// The Control Point's value handle on the scripted phone.
    let controlPoint: UInt16 = 0x0020

    func writeRequest(_ command: ControlPointCommand) -> String {
        Hex.string([0x12, UInt8(controlPoint & 0xFF), UInt8(controlPoint >> 8)] + command.bytes, separator: " ")
    }

    /// `timeout` is the session's command deadline. Only the test of that deadline sets a
    /// short one; the others leave it far past `next`'s own, so a machine too loaded to run
    /// the driver for half a minute (seen in a full run at load 15 on 2 cores) fails
    /// nothing by the deadline firing first.
    func driver(_ bearer: ScriptedBearer, timeout: Duration = .seconds(600)) -> (SessionDriver, AsyncStream<ANCSSessionOutput>) {
        let (outputs, continuation) = AsyncStream.makeStream(of: ANCSSessionOutput.self)
        var cache = AppNameCache()
        cache.insert(.init(name: "Messages", isFallback: false), for: "com.apple.MobileSMS")
        let session = ANCSSession(configuration: ANCSSessionConfiguration(commandTimeout: timeout), appNames: cache)
        let driver = SessionDriver(session: session, gatt: GATTClient(att: ATTClient(bearer: bearer)), controlPoint: controlPoint) { continuation.yield($0) }
        return (driver, outputs)
    }

    func next(_ outputs: AsyncStream<ANCSSessionOutput>) async throws -> ANCSSessionOutput? {
        try await withDeadline("the driver's next output") {
            var iterator = outputs.makeAsyncIterator()
            return await iterator.next()
        }
    }

    @Test func fetchGoesOutAsAWriteAndTheAnswerComesBackAsANotification() async throws {
        let fetch = ControlPointCommand.getNotificationAttributes(uid: 3, attributes: ANCSSessionConfiguration().attributes)
        let bearer = ScriptedBearer([step(writeRequest(fetch), "13")], mtu: 185)
        let (driver, outputs) = driver(bearer)
        driver.feed(.notificationSource([0, 0, 4, 1, 3, 0, 0, 0]))
        await bearer.waitForSent(1)
        await bearer.drain()
        for fragment in fragments(answer(uid: 3)) { driver.feed(.dataSource(fragment)) }
        guard case let .notification(notification) = try await next(outputs) else { Issue.record("no notification"); return }
        #expect(notification.attributes?.title == "Ann")
        #expect(notification.appName == "Messages")
        #expect(bearer.failures.isEmpty)
    }

    @Test func silentPhoneEndsTheFetchAtTheDeadlineOnTheTimer() async throws {
        let fetch = ControlPointCommand.getNotificationAttributes(uid: 9, attributes: ANCSSessionConfiguration().attributes)
        let bearer = ScriptedBearer([step(writeRequest(fetch), "13")])
        let (driver, outputs) = driver(bearer, timeout: .milliseconds(200))
        driver.feed(.notificationSource([0, 0, 4, 1, 9, 0, 0, 0]))
        // Half an answer, then nothing: the timer, not another input, ends the wait.
        driver.feed(.dataSource(Array(answer(uid: 9).prefix(27))))
        guard case let .notification(notification) = try await next(outputs) else { Issue.record("no notification"); return }
        #expect(notification.fetchFailure == .timedOut(missingAttributes: [1, 2, 3, 4, 5, 6, 7]))
        #expect(driver.counters.failedCommands == 1)
    }

    @Test func writeNotPermittedTellsTheUserWhatToDo() async throws {
        let fetch = ControlPointCommand.getNotificationAttributes(uid: 1, attributes: ANCSSessionConfiguration().attributes)
        let bearer = ScriptedBearer([step(writeRequest(fetch), "01 12 20 00 03")])
        let (driver, outputs) = driver(bearer)
        driver.feed(.notificationSource([0, 0, 4, 1, 1, 0, 0, 0]))
        guard case let .problem(problem) = try await next(outputs) else { Issue.record("no problem told"); return }
        #expect(problem == .notificationSharingNotAllowed)
        #expect(problem.description.contains("Share System Notifications"))
    }

    @Test func endingTheLinkTellsWhatWaited() async throws {
        let fetch = ControlPointCommand.getNotificationAttributes(uid: 1, attributes: ANCSSessionConfiguration().attributes)
        let bearer = ScriptedBearer([step(writeRequest(fetch), "13", held: true)])
        let (driver, outputs) = driver(bearer)
        driver.feed(.notificationSource([0, 0, 4, 1, 1, 0, 0, 0]))
        driver.feed(.notificationSource([0, 0, 4, 1, 2, 0, 0, 0]))
        driver.end()
        var failures: [ANCSCommandFailure?] = []
        for _ in 0..<2 {
            if case let .notification(notification) = try await next(outputs) { failures.append(notification.fetchFailure) }
        }
        #expect(failures == [.disconnected, .disconnected])
    }

    /// At the minimum MTU a Get App Attributes carrying a long bundle identifier does not
    /// fit a Write Request: it goes out as prepared writes and one Execute Write (before, it
    /// failed in our client and was told as the phone refusing it with 0x0E).
    @Test func aCommandLongerThanTheMTUGoesOutAsPreparedWrites() async throws {
        let app = "com.example.an.app.with.a.long.identifier"
        let fetch = ControlPointCommand.getNotificationAttributes(uid: 4, attributes: ANCSSessionConfiguration().attributes)
        let name = ControlPointCommand.getAppAttributes(appIdentifier: app, attributes: [.displayName]).bytes
        var steps = [step(writeRequest(fetch), "13")]
        for offset in stride(from: 0, to: name.count, by: 18) {
            let prepare = Hex.string([0x16, 0x20, 0x00, UInt8(offset), 0x00] + name[offset..<min(offset + 18, name.count)], separator: " ")
            steps.append(step(prepare, "17" + prepare.dropFirst(2)))
        }
        steps.append(step("18 01", "19"))
        #expect(steps.count == 5)
        let bearer = ScriptedBearer(steps)
        let (driver, outputs) = driver(bearer)
        driver.feed(.notificationSource([0, 0, 4, 1, 4, 0, 0, 0]))
        await bearer.waitForSent(1)
        await bearer.drain()
        for fragment in fragments(answer(uid: 4, app: app), size: 20) { driver.feed(.dataSource(fragment)) }
        // Before, the write failed in our client and the prepared writes never came.
        let sends = steps.count
        try await withDeadline("the prepared writes and the Execute Write") { await bearer.waitForSent(sends) }
        await bearer.drain()
        driver.feed(.dataSource([0x01] + Array(app.utf8) + [0, 0, 7, 0] + Array("Example".utf8)))
        guard case let .notification(notification) = try await next(outputs) else { Issue.record("no notification"); return }
        #expect(notification.appName == "Example")
        #expect(notification.attributes?.appIdentifier == app)
        #expect(bearer.failures.isEmpty)
    }

    /// A phone that echoes a prepared write with another value: our client cancels the
    /// queue, and the session is told the write got no answer, not that the phone refused
    /// it (before: ATT 0x0E, Unlikely Error, which the phone never sent).
    @Test func aPreparedWriteEchoedWrongIsToldAsNoAnswer() async throws {
        let app = "com.example.an.app.with.a.long.identifier"
        let fetch = ControlPointCommand.getNotificationAttributes(uid: 4, attributes: ANCSSessionConfiguration().attributes)
        let name = ControlPointCommand.getAppAttributes(appIdentifier: app, attributes: [.displayName]).bytes
        let prepare = [0x16, 0x20, 0x00, 0x00, 0x00] + name.prefix(18)
        var echo = prepare
        echo[0] = 0x17
        echo[6] ^= 0xFF
        let bearer = ScriptedBearer([
            step(writeRequest(fetch), "13"),
            step(Hex.string(prepare, separator: " "), Hex.string(echo, separator: " ")),
            step("18 00", "19"),
        ])
        let (driver, outputs) = driver(bearer)
        driver.feed(.notificationSource([0, 0, 4, 1, 4, 0, 0, 0]))
        await bearer.waitForSent(1)
        await bearer.drain()
        for fragment in fragments(answer(uid: 4, app: app), size: 20) { driver.feed(.dataSource(fragment)) }
        guard case let .problem(.appNameUnavailable(identifier, failure)) = try await next(outputs) else {
            Issue.record("no problem told")
            return
        }
        #expect(identifier == app)
        guard case let .writeFailed(reason) = failure else {
            Issue.record("told as \(failure)")
            return
        }
        #expect(reason.contains("echoed a different value"))
        #expect(failure.description.contains("failed on our side"))
        guard case let .notification(notification) = try await next(outputs) else { Issue.record("no notification"); return }
        #expect(notification.appName == app && notification.attributes?.appIdentifier == app)
        #expect(bearer.failures.isEmpty)
    }

    func answer(uid: UInt32, app: String = "com.apple.MobileSMS") -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt8(0))
        writer.write(uid)
        for (id, value) in [(0, app), (1, "Ann"), (2, ""), (3, String(repeating: "x", count: 300)), (4, "300"),
                            (5, "20250102T030405"), (6, ""), (7, "Clear")] as [(UInt8, String)] {
            writer.write(id)
            writer.write(UInt16(value.utf8.count))
            writer.write(contentsOf: value.utf8)
        }
        return writer.bytes
    }

    func fragments(_ bytes: [UInt8], size: Int = 182) -> [[UInt8]] {
        stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }
}
