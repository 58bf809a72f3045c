@testable import BareBLE
import BluetoothCore
import HCI
import HCITransport
import Testing
import TestSupport

/// `Central.resolve` against a scripted controller that hears nothing, no radio: its
/// timeout is a deadline on the one timer, and a cancelled caller returns at once.
@Suite struct ResolveDeadlineTests {
    static let address = BluetoothAddress(0xC0FF_EE00_0002)

    /// A powered-on controller that accepts scanning and reports no advertisement.
    static func silentScanner() async throws -> (Central, L2CAPHarness) {
        let harness = try await L2CAPHarness.make()
        let chip = harness.chip
        harness.transport.setResponder { packet in
            guard packet.type == .command, packet.bytes.count >= 3 else { return chip.answer(packet) }
            let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
            guard opcode == LESetScanParameters.opcode || opcode == LESetScanEnable.opcode else { return chip.answer(packet) }
            chip.log.append(packet)
            let complete = HCIEvent.commandComplete(HCIEvent.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: [0]))
            return [HCIPacket(.event, complete.encode())]
        }
        return (Central(controller: harness.controller), harness)
    }

    /// Waits until the controller has been told to start scanning.
    static func scanStarted(_ harness: L2CAPHarness) async throws {
        while true {
            let packet = try await harness.log.next("LE Set Scan Enable")
            if packet.type == .command, packet.bytes.count >= 4, packet.bytes[0] == UInt8(LESetScanEnable.opcode.rawValue & 0xFF),
               packet.bytes[1] == UInt8(LESetScanEnable.opcode.rawValue >> 8), packet.bytes[3] == 1 { return }
        }
    }

    @Test func anAddressNeverHeardResolvesToNilAtTheDeadline() async throws {
        let (central, _) = try await Self.silentScanner()
        let resolved = try await withDeadline("resolve with a 200 ms timeout", seconds: 10) {
            try await central.resolve(Self.address, timeout: .milliseconds(200))
        }
        #expect(resolved == nil)
    }

    @Test func aCancelledResolveReturnsAtOnceAndLeavesNoDeadlineArmed() async throws {
        let (central, harness) = try await Self.silentScanner()
        // A timer of its own: the shared one holds whatever the tests beside this one armed
        // (118 at once in a full CI run), so only this count can show one deadline left.
        let timer = DeadlineTimer()
        let resolving = Task { try await central.resolve(Self.address, timeout: .seconds(60), timer: timer) }
        try await Self.scanStarted(harness)
        #expect(timer.armedCount == 1, "the resolve's deadline")
        let clock = ContinuousClock()
        let start = clock.now
        resolving.cancel()
        let resolved = try await withDeadline("a cancelled resolve", seconds: 10) { try await resolving.value }
        #expect(resolved == nil)
        #expect(clock.now - start < .seconds(30), "a cancelled wait returns at once, not at its 60 s deadline")
        // Its 60 s deadline was cancelled with it.
        #expect(timer.armedCount == 0)
    }
}
