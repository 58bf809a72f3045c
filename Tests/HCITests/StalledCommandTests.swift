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
        // The command's task waits in the send, holding a thread of the pool until the
        // stream takes it; the controller's side runs on a thread of its own, so it needs
        // nothing from the pool to get there.
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
}
