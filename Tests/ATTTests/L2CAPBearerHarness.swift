import BluetoothCore
import HCI
import HCITransport
import L2CAP
import Synchronization
import TestSupport

/// A scripted LE controller for the bearer tests: answers bring-up, reports a small ACL
/// buffer (27 bytes) so PDUs fragment, and hands every ACL packet the host sends to a
/// waiter (no polling: the send itself resumes it).
final class BearerTestChip: Sendable {
    static let aclLength: UInt16 = 27
    private struct State {
        var acl: [ACLDataPacket] = []
        var read = 0
        var waiter: CheckedContinuation<ACLDataPacket, Never>?
    }
    private let state = Mutex(State())

    func answer(_ packet: HCIPacket) -> [HCIPacket] {
        if packet.type == .acl, let acl = try? ACLDataPacket(decoding: packet.bytes) {
            let waiter: CheckedContinuation<ACLDataPacket, Never>? = state.withLock { state in
                state.acl.append(acl)
                guard let waiter = state.waiter else { return nil }
                state.waiter = nil
                state.read += 1
                return waiter
            }
            waiter?.resume(returning: acl)
            // The controller sent it at once: the credit comes back.
            let done = HCIEvent.numberOfCompletedPackets(.init(completions: [.init(connectionHandle: acl.connectionHandle, completedPackets: 1)]))
            return [HCIPacket(.event, done.encode())]
        }
        guard packet.type == .command, packet.bytes.count >= 3 else { return [] }
        let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
        var writer = ByteWriter()
        switch opcode {
        case ReadLocalVersionInformation.opcode:
            ReadLocalVersionInformation.ReturnParameters(hciVersion: 0x0D, hciSubversion: 1, lmpVersion: 0x0D, manufacturer: 2, lmpSubversion: 1).encode(into: &writer)
        case ReadLocalSupportedCommands.opcode:
            var octets = [UInt8](repeating: 0, count: 64)
            if let bit = LEReadBufferSizeV1.supportedCommandBit { octets[bit.octet] |= 1 << bit.bit }
            writer.write(contentsOf: octets)
        case ReadLocalSupportedFeatures.opcode:
            writer.write(LMPFeatures([.leSupportedController, .brEdrNotSupported]).rawValue)
        case LEReadLocalSupportedFeatures.opcode:
            writer.write(LEFeatures([.leEncryption]).rawValue)
        case ReadBDADDR.opcode:
            writer.write(BluetoothAddress(0xF00D_0000_0001))
        case LEReadBufferSizeV1.opcode:
            writer.write(Self.aclLength)
            writer.write(UInt8(4))
        case Reset.opcode, SetEventMask.opcode, LESetEventMask.opcode:
            break
        default:
            writer.write(HCIErrorCode.unknownCommand.rawValue)
            let complete = HCIEvent.commandComplete(.init(numHCICommandPackets: 1, opcode: opcode, returnParameters: writer.bytes))
            return [HCIPacket(.event, complete.encode())]
        }
        let complete = HCIEvent.commandComplete(.init(numHCICommandPackets: 1, opcode: opcode, returnParameters: [0] + writer.bytes))
        return [HCIPacket(.event, complete.encode())]
    }

    /// The next ACL packet the host sent.
    func nextACL() async throws -> ACLDataPacket {
        try await withDeadline("an ACL packet from the host") { [self] in
            await withCheckedContinuation { (continuation: CheckedContinuation<ACLDataPacket, Never>) in
                let ready: ACLDataPacket? = state.withLock { state in
                    if state.read < state.acl.count {
                        state.read += 1
                        return state.acl[state.read - 1]
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// A powered-on controller with L2CAP attached and one LE connection up.
struct BearerHarness {
    static let handle: UInt16 = 0x0040
    let chip: BearerTestChip
    let transport: ScriptedTransport
    let controller: HCIController
    let manager: ChannelManager

    static func make() async throws -> BearerHarness {
        let chip = BearerTestChip()
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport)
        try controller.start()
        let manager = ChannelManager(controller: controller)
        try await controller.powerOn()
        let harness = BearerHarness(chip: chip, transport: transport, controller: controller, manager: manager)
        await harness.inject(.le(.enhancedConnectionComplete(LEEnhancedConnectionComplete(
            version: .v2(advertisingHandle: 0xFF, syncHandle: 0xFFFF), status: .success,
            connectionHandle: handle, role: .central, peerAddressType: .random, peerAddress: BluetoothAddress(0xC44B_4D00_0001),
            localResolvablePrivateAddress: BluetoothAddress(0), peerResolvablePrivateAddress: BluetoothAddress(0),
            connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 72, centralClockAccuracy: 0
        ))))
        return harness
    }

    func inject(_ event: HCIEvent) async {
        transport.inject([HCIPacket(.event, event.encode())])
        await transport.drain()
    }

    /// ACL packets from the peer, in order.
    func inject(_ packets: [ACLDataPacket]) async {
        transport.inject(packets.map { HCIPacket(.acl, $0.encode()) })
        await transport.drain()
    }

    func disconnect(reason: HCIErrorCode) async {
        await inject(.disconnectionComplete(.init(status: .success, connectionHandle: Self.handle, reason: reason)))
    }
}
