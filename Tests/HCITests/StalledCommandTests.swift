import BluetoothCore
import Glibc
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// A command sent while the controller's byte stream takes nothing (a UART held by CTS, a
/// TCP peer slow to read) must not stop the driver hearing the controller: its events,
/// Number Of Completed Packets among them, are handled while the command waits to go out.
@Suite struct StalledCommandTests {
    @Test func aCommandTheStreamHoldsBackDoesNotHoldTheEvents() async throws {
        let (controller, transport, filler) = try stalledStreamPair()
        defer { close(controller) }
        let driver = HCIController(transport: transport)
        try driver.start()
        defer { driver.close() }
        let seen = Lock<[UInt8]>([])
        let subscription = driver.subscribe { event in
            if case let .dataBufferOverflow(overflow) = event { seen.withLock { $0.append(overflow.linkType) } }
        }
        defer { subscription.cancel() }
        // The command is posted: the reader writes it once the stream takes bytes again.
        // The controller's side runs on a thread of its own.
        let reset = Task { _ = try await driver.send(Reset(), timeout: .seconds(180)) }
        let controllerSide = try await onOwnThread { () -> (heard: Bool, filler: Int, command: [UInt8]) in
            // Sequencing only: the command reaches its wait for the full stream.
            usleep(200_000)
            writeAll(controller, HCIPacket(.event, [0x1A, 0x01, 0x01]).h4Bytes)
            for _ in 0..<6000 where seen.withLock({ $0.isEmpty }) { usleep(10_000) }
            // Heard while the command waited. Then the controller reads again, within the
            // send's time: the command goes out whole, and its answer ends it. Before, the
            // sending thread kept the driver's lock while it waited, the event waited for
            // that lock, and the send's time ran out first.
            let heard = !seen.withLock { $0.isEmpty }
            let filler = readExactly(controller, filler, seconds: 60).count
            let command = readExactly(controller, 4, seconds: 60)
            writeAll(controller, [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
            return (heard, filler, command)
        }
        #expect(controllerSide.heard)
        #expect(controllerSide.filler == filler)
        #expect(controllerSide.command == [0x01, 0x03, 0x0C, 0x00])
        try await reset.value
        #expect(seen.withLock { $0 } == [0x01])
    }

    /// Commands leave the driver through `post`: the task that sends one never waits in
    /// the transport for a stalled stream (holding a thread of the tasks' pool), it waits
    /// for the answer, suspended.
    @Test func commandsArePostedNotSentWithAWait() async throws {
        let scripted = ScriptedTransport { packet in
            packet.type == .command ? [HCIPacket(.event, [0x0E, 0x04, 0x01] + packet.bytes.prefix(2) + [0x00])] : []
        }
        let transport = SendCounting(scripted)
        let driver = HCIController(transport: transport)
        try driver.start()
        defer { driver.close() }
        _ = try await Task { try await driver.send(Reset()) }.value
        #expect(transport.counts.withLock { $0 } == (waitingFromTasks: 0, posted: 1))
    }
}

/// Counts the sends that wait for the stream, made from a task, and the posts.
final class SendCounting: HCITransport {
    let base: any HCITransport
    let counts = Lock((waitingFromTasks: 0, posted: 0))
    init(_ base: any HCITransport) { self.base = base }
    var name: String { base.name }
    func start(receive: @escaping @Sendable (HCIPacket) -> Void, closed: @escaping @Sendable (TransportError?) -> Void) throws(TransportError) {
        try base.start(receive: receive, closed: closed)
    }
    func send(_ packet: HCIPacket) throws(TransportError) {
        if withUnsafeCurrentTask(body: { $0 != nil }) { counts.withLock { $0.waitingFromTasks += 1 } }
        try base.send(packet)
    }
    func post(_ packet: HCIPacket) throws(TransportError) {
        counts.withLock { $0.posted += 1 }
        try base.send(packet)
    }
    func close() { base.close() }
}
