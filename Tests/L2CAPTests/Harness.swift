import BluetoothCore
import HCI
import HCITransport
@testable import L2CAP
import Synchronization
import Testing
import TestSupport

/// Thrown when a scripted exchange waited longer than its deadline.
struct TestTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Packets the host sent after bring-up, read in order with a deadline (no polling: a
/// waiter is resumed by the send itself, or by its timer).
final class PacketLog: Sendable {
    private struct State {
        var packets: [HCIPacket] = []
        var read = 0
        var waiter: (id: Int, continuation: CheckedContinuation<HCIPacket?, Never>)?
        var nextWaiter = 0
    }
    private let state = Mutex(State())

    func append(_ packet: HCIPacket) {
        let waiter: CheckedContinuation<HCIPacket?, Never>? = state.withLock { state in
            state.packets.append(packet)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.read += 1
            return waiter.continuation
        }
        waiter?.resume(returning: packet)
    }

    var all: [HCIPacket] { state.withLock { $0.packets } }

    func next(_ what: String = "a packet from the host", timeout: Duration = .seconds(5)) async throws -> HCIPacket {
        let packet: HCIPacket? = await withCheckedContinuation { continuation in
            let ready: HCIPacket? = state.withLock { state in
                if state.read < state.packets.count {
                    state.read += 1
                    return state.packets[state.read - 1]
                }
                state.nextWaiter += 1
                let id = state.nextWaiter
                state.waiter = (id, continuation)
                Task { [self] in
                    try? await Task.sleep(for: timeout)
                    expire(id)
                }
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        guard let packet else { throw TestTimeout(what: what) }
        return packet
    }

    private func expire(_ id: Int) {
        let waiter: CheckedContinuation<HCIPacket?, Never>? = state.withLock { state in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: nil)
    }

    func nextACL(timeout: Duration = .seconds(5)) async throws -> ACLDataPacket {
        let packet = try await next("an ACL packet", timeout: timeout)
        guard packet.type == .acl else { throw TestTimeout(what: "an ACL packet, got \(packet.type)") }
        return try ACLDataPacket(decoding: packet.bytes)
    }
}

/// A scripted LE controller: answers bring-up, acknowledges LE Connection Update with
/// Command Status, and checks that the host never has more ACL packets inside it than it
/// has buffers (credits come back only when the test says so).
final class TestChip: Sendable {
    let aclLength: UInt16
    let aclCount: UInt8
    private struct Counters { var inFlight = 0; var maximumInFlight = 0; var recording = false }
    private let counters = Mutex(Counters())
    let log = PacketLog()

    init(aclLength: UInt16, aclCount: UInt8) {
        self.aclLength = aclLength
        self.aclCount = aclCount
    }

    var maximumInFlight: Int { counters.withLock { $0.maximumInFlight } }
    func startRecording() { counters.withLock { $0.recording = true } }

    /// The controller freed `count` buffers (the test then injects the event).
    func release(_ count: Int) { counters.withLock { $0.inFlight -= count } }

    func answer(_ packet: HCIPacket) -> [HCIPacket] {
        let recording = counters.withLock { counters in
            if packet.type == .acl {
                counters.inFlight += 1
                counters.maximumInFlight = max(counters.maximumInFlight, counters.inFlight)
            }
            return counters.recording
        }
        if recording { log.append(packet) }
        guard packet.type == .command, packet.bytes.count >= 3 else { return [] }
        let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
        var writer = ByteWriter()
        switch opcode {
        case ReadLocalVersionInformation.opcode:
            ReadLocalVersionInformation.ReturnParameters(hciVersion: 0x0D, hciSubversion: 1, lmpVersion: 0x0D, manufacturer: 2, lmpSubversion: 1).encode(into: &writer)
        case ReadLocalSupportedCommands.opcode:
            var octets = [UInt8](repeating: 0, count: 64)
            if let bit = LEReadBufferSizeV1.supportedCommandBit { octets[bit.octet] |= 1 << bit.bit }
            if let bit = LEConnectionUpdate.supportedCommandBit { octets[bit.octet] |= 1 << bit.bit }
            writer.write(contentsOf: octets)
        case ReadLocalSupportedFeatures.opcode:
            writer.write(LMPFeatures([.leSupportedController, .brEdrNotSupported]).rawValue)
        case LEReadLocalSupportedFeatures.opcode:
            writer.write(LEFeatures([.leEncryption]).rawValue)
        case ReadBDADDR.opcode:
            writer.write(BluetoothAddress(0xF00D_0000_0001))
        case LEReadBufferSizeV1.opcode:
            writer.write(aclLength)
            writer.write(aclCount)
        case LEConnectionUpdate.opcode:
            let status = HCIEvent.commandStatus(HCIEvent.CommandStatus(status: .success, numHCICommandPackets: 1, opcode: opcode))
            return [HCIPacket(.event, status.encode())]
        case Reset.opcode, SetEventMask.opcode, LESetEventMask.opcode:
            break
        default:
            let complete = HCIEvent.commandComplete(HCIEvent.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: [HCIErrorCode.unknownCommand.rawValue]))
            return [HCIPacket(.event, complete.encode())]
        }
        let complete = HCIEvent.commandComplete(HCIEvent.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: [0] + writer.bytes))
        return [HCIPacket(.event, complete.encode())]
    }
}

/// A powered-on controller on a scripted transport with a channel manager attached.
struct Harness {
    let chip: TestChip
    let transport: ScriptedTransport
    let controller: HCIController
    let manager: ChannelManager

    static let peer = BluetoothAddress(0xC44B_4D00_0001)

    static func make(
        aclLength: UInt16 = 27, aclCount: UInt8 = 4,
        configuration: ChannelManager.Configuration = .init()
    ) async throws -> Harness {
        let chip = TestChip(aclLength: aclLength, aclCount: aclCount)
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport)
        try controller.start()
        let manager = ChannelManager(controller: controller, configuration: configuration)
        try await controller.powerOn()
        chip.startRecording()
        return Harness(chip: chip, transport: transport, controller: controller, manager: manager)
    }

    var log: PacketLog { chip.log }

    func inject(_ event: HCIEvent) async {
        transport.inject([HCIPacket(.event, event.encode())])
        await transport.drain()
    }

    func inject(_ packets: [ACLDataPacket]) async {
        transport.inject(packets.map { HCIPacket(.acl, $0.encode()) })
        await transport.drain()
    }

    /// LE Enhanced Connection Complete v2 for `handle`.
    func connect(_ handle: UInt16, role: ConnectionRole = .central) async {
        await inject(.le(.enhancedConnectionComplete(LEEnhancedConnectionComplete(
            version: .v2(advertisingHandle: 0xFF, syncHandle: 0xFFFF), status: .success,
            connectionHandle: handle, role: role, peerAddressType: .random, peerAddress: Self.peer,
            localResolvablePrivateAddress: BluetoothAddress(0), peerResolvablePrivateAddress: BluetoothAddress(0),
            connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 72, centralClockAccuracy: 0
        ))))
    }

    func disconnect(_ handle: UInt16, reason: HCIErrorCode) async {
        await inject(.disconnectionComplete(HCIEvent.DisconnectionComplete(status: .success, connectionHandle: handle, reason: reason)))
    }

    /// The controller reports `count` packets of `handle` done.
    func complete(_ handle: UInt16, _ count: Int = 1) async {
        chip.release(count)
        await inject(.numberOfCompletedPackets(HCIEvent.NumberOfCompletedPackets(
            completions: [.init(connectionHandle: handle, completedPackets: UInt16(count))])))
    }

    /// A whole B-frame from the peer in one ACL packet.
    func receive(_ payload: [UInt8], cid: ChannelIdentifier, handle: UInt16) async {
        await inject([ACLDataPacket(connectionHandle: handle, packetBoundary: .firstFlushable, data: BasicFrame(channelID: cid, payload: payload).encode())])
    }

    /// A signaling command from the peer.
    func receiveSignaling(_ command: SignalingCommand, handle: UInt16) async {
        await receive(command.encode(), cid: .leSignaling, handle: handle)
    }

    /// The next ACL packet, which must be a whole signaling C-frame; credit returned.
    func nextSignaling(handle: UInt16) async throws -> SignalingCommand {
        let packet = try await log.nextACL()
        #expect(packet.connectionHandle == handle)
        #expect(packet.packetBoundary == .firstNonFlushable)
        await complete(packet.connectionHandle)
        let frame = try BasicFrame(decoding: packet.data)
        #expect(frame.channelID == .leSignaling)
        return try SignalingCommand(decoding: frame.payload)
    }
}

/// Collects what a channel or connection handler was told.
final class Inbox<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    func append(_ event: Event) { events.withLock { $0.append(event) } }
    var all: [Event] { events.withLock { $0 } }
}
