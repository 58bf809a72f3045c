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
        let reset = Task { _ = try await driver.send(Reset(), timeout: .seconds(60)) }
        // Sequencing only: the command reaches its wait for the full stream.
        try await Task.sleep(for: .milliseconds(200))
        writeAll(controller, HCIPacket(.event, [0x1A, 0x01, 0x01]).h4Bytes)
        try await waitUntil({ !seen.withLock { $0.isEmpty } }, timeout: .seconds(10))
        // The controller reads again within the send's 2 s: the command goes out whole and
        // its answer ends it. Before, the sending thread kept the driver's lock while it
        // waited, the event waited for that lock, and the send's 2 s ran out first.
        #expect(readExactly(controller, filler).count == filler)
        #expect(readExactly(controller, 4) == [0x01, 0x03, 0x0C, 0x00])
        writeAll(controller, [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        try await reset.value
        #expect(seen.withLock { $0 } == [0x01])
    }
}
