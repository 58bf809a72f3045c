import BluetoothCore
import HCITransport
@testable import KernelHost
import Testing

/// The pure parts of the management interface: replies, statuses as errors, the addresses
/// of pairing events. The channel itself is exercised in the kernel lane.
@Suite struct KernelManagementTests {
    @Test func managementReplies() throws {
        // Command Complete (0x0001) for Set Powered (0x0005) on index 0, status 0, settings.
        let reply = try KernelManagement.Reply(decoding: [0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x05, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00])
        #expect(reply.commandOpcode == 0x0005 && reply.status == 0 && reply.index == 0)
        #expect(reply.parameters == [0x01, 0x02, 0x00, 0x00])
        // Command Status (0x0002), status Busy.
        let busy = try KernelManagement.Reply(decoding: [0x02, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0D, 0x00, 0x0A])
        #expect(busy.commandOpcode == 0x000D && busy.status == 0x0A && busy.index == 1)
        // Other events, truncated or inconsistent lengths: not replies.
        #expect(throws: DecodeError.self) { try KernelManagement.Reply(decoding: [0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 1, 2, 3, 4]) }
        #expect(throws: DecodeError.self) { try KernelManagement.Reply(decoding: [0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x05, 0x00]) }
        #expect(throws: DecodeError.self) { try KernelManagement.Reply(decoding: [0x01, 0x00]) }
    }

    /// A refused command says what to do: an unknown index names the missing adapter,
    /// Busy is the "held by another program" error, success passes.
    @Test func managementStatusesBecomeErrors() throws {
        // Command Status for Set Powered on index 7: Invalid Index (0x11).
        let invalid = try KernelManagement.Reply(decoding: [0x02, 0x00, 0x07, 0x00, 0x03, 0x00, 0x05, 0x00, 0x11])
        #expect(throws: TransportError.self) { try KernelManagement.check(invalid, 0x0005, index: 7) }
        do {
            try KernelManagement.check(invalid, 0x0005, index: 7)
        } catch {
            #expect(error.description.contains("there is no adapter hci7"), "\(error)")
        }
        let busy = try KernelManagement.Reply(decoding: [0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0x00, 0x0A])
        #expect(throws: TransportError.adapterBusy(index: 0)) { try KernelManagement.check(busy, 0x0005, index: 0) }
        let done = try KernelManagement.Reply(decoding: [0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x05, 0x00, 0x00])
        try KernelManagement.check(done, 0x0005, index: 0)
    }

    /// The address of a pairing event (little endian, then mgmt's type: 1 LE public,
    /// 2 LE random) is the peer the responder is told about.
    @Test func pairingEventAddresses() {
        let random = KernelPairingAgent.peer([0x01, 0x00, 0x00, 0x4D, 0x4B, 0xC4, 0x02])
        #expect(random == DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random))
        let publicAddress = KernelPairingAgent.peer([0x00, 0x02, 0x00, 0x00, 0x0D, 0xF0, 0x01])
        #expect(publicAddress == DeviceAddress(BluetoothAddress(0xF00D_0000_0200), type: .public))
    }
}
