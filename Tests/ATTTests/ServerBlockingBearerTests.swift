@testable import ATT
import BluetoothCore
import Dispatch
import Foundation
import Glibc
import TestSupport
import Testing

/// A bearer whose `send` may wait (the kernel's socket holds writes while it pairs): what the
/// server sends must hold neither the thread that reads (the next indication, sent when a
/// confirmation is read) nor a thread of the tasks' pool (answers, sent by the drain task;
/// the kernel pairing agent's answer, which would end the wait, runs on that pool).
@Suite struct ServerBlockingBearerTests {
    @Test func aConfirmationWhoseNextIndicationWaitsToBeSentDoesNotHoldTheReader() async throws {
        let bearer = SlowSendBearer(held: false)
        let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: 0x0040)
        let client = ATTClient(bearer: bearer, server: server)
        let arrived = Lock<[[UInt8]]>([])
        let subscription = client.addValueHandler(handle: 0x0010) { value in arrived.withLock { $0.append(value.value) } }
        defer { subscription.cancel() }
        let first = Task { try await server.indicate(handle: 0x0005, value: [0x01]) }
        try await withDeadline("the first indication") { while bearer.sent.isEmpty { try await Task.sleep(for: .milliseconds(5)) } }
        let second = Task { try await server.indicate(handle: 0x0005, value: [0x02]) }
        // Sequencing only: the second is queued behind the first before it is confirmed.
        try await Task.sleep(for: .milliseconds(100))
        bearer.hold()
        // The confirmation starts the second indication, whose send is held back; then a
        // notification for the client on the same bearer: it must arrive while the
        // indication still waits (before, the reader sat in that send).
        bearer.inject([[0x1E], [0x1B, 0x10, 0x00, 0x07]])
        try await withDeadline("the notification while the indication is held") {
            while arrived.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(arrived.withLock { $0 } == [[0x07]])
        #expect(bearer.sent == [[0x1D, 0x05, 0x00, 0x01]])
        try await first.value
        bearer.release()
        try await withDeadline("the second indication") { while bearer.sent.count < 2 { try await Task.sleep(for: .milliseconds(5)) } }
        #expect(bearer.sent.last == [0x1D, 0x05, 0x00, 0x02])
        bearer.inject([[0x1E]])
        try await second.value
    }

    @Test func answersTheBearerHoldsBackDoNotHoldTheTasksPool() async throws {
        // More servers than the pool has threads, each answering a Read whose send is held.
        let count = 4 * max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) + 4
        let bearers = (0..<count).map { _ in SlowSendBearer() }
        let links = bearers.map { bearer in
            let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: 0x0040)
            return (server, ATTClient(bearer: bearer, server: server))
        }
        for bearer in bearers { bearer.inject([[0x0A, 0x03, 0x00]]) }
        // Every answer waits in its held send, and none of them on a task: a task waiting
        // there holds a thread of the pool. Before, each drain task sat in its send, and
        // with more links than threads not even every send was reached. (Asked of the
        // sends themselves: whether some other task still runs depends on every other
        // test running beside this one.)
        try await waitUntil({ bearers.reduce(0) { $0 + $1.waiting } == count }, timeout: .seconds(60))
        #expect(bearers.reduce(0) { $0 + $1.sendsFromTasks } == 0)
        for bearer in bearers { bearer.release() }
        try await withDeadline("every answer") {
            while bearers.contains(where: { $0.sent.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(bearers.allSatisfy { $0.sent == [[0x0B] + Array("BareBLE".utf8)] })
        withExtendedLifetime(links) {}
    }

    @Test func aNotificationDoesNotOvertakeAnAnswerMadeBeforeIt() async throws {
        let bearer = SlowSendBearer()
        let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: 0x0040)
        let client = ATTClient(bearer: bearer, server: server)
        bearer.inject([[0x0A, 0x03, 0x00]])
        try await waitUntil({ bearer.waiting == 1 }, timeout: .seconds(10))
        // The value changes after the read was answered: its notification must reach the
        // client after the answer, or the client keeps the old value the answer carries.
        // On a thread of its own, in case notify waited for the answer's send (held).
        let notified = Inbox<String>()
        Thread {
            do throws(ATTServerError) {
                try server.notify(handle: 0x0003, value: [0x01])
                notified.put("sent")
            } catch {
                notified.put("\(error)")
            }
        }.start()
        // Sequencing only: the notification is on its way before the sends are released.
        try await Task.sleep(for: .milliseconds(100))
        bearer.release()
        #expect(try await onOwnThread { notified.wait(for: 1) } == ["sent"])
        await server.waitUntilSent()
        #expect(bearer.sent == [[0x0B] + Array("BareBLE".utf8), [0x1B, 0x03, 0x00, 0x01]])
        withExtendedLifetime(client) {}
    }

    @Test func notificationsDoNotHoldTheirCallerWhileTheBearerHoldsWrites() async throws {
        let bearer = SlowSendBearer()
        var configuration = ATTServer.Configuration()
        configuration.waitingNotificationLimit = 4
        let server = ATTServer(bearer: bearer, store: InMemoryAttributeStore.testDatabase(), bearerID: 0x0040, configuration: configuration)
        let client = ATTClient(bearer: bearer, server: server)
        // The kernel's socket holds writes (it pairs, or the peer takes no data): the caller
        // of notify (an application thread, a task of the pool) learns at once whether the
        // value was taken, and past the bound that it was not. Before, each notify waited
        // in the held send.
        let results = Inbox<String>()
        Thread {
            for value in UInt8(0)..<6 {
                do throws(ATTServerError) {
                    try server.notify(handle: 0x0003, value: [value])
                    results.put("queued")
                } catch .outgoingQueueFull {
                    results.put("full")
                } catch {
                    results.put("\(error)")
                }
            }
        }.start()
        #expect(try await onOwnThread { results.wait(for: 6, seconds: 10) } == ["queued", "queued", "queued", "queued", "full", "full"])
        let drained = Task { await server.waitUntilSent() }
        bearer.release()
        await drained.value
        #expect(bearer.sent == (UInt8(0)..<4).map { [0x1B, 0x03, 0x00, $0] })
        // Room again: the next value is taken.
        try server.notify(handle: 0x0003, value: [0x09])
        await server.waitUntilSent()
        #expect(bearer.sent.last == [0x1B, 0x03, 0x00, 0x09])
        withExtendedLifetime(client) {}
    }
}
