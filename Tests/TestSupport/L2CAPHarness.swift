import BluetoothCore
import HCI
import HCITransport
import L2CAP
import Logging

/// Packets the host sent after bring-up, read in order with a deadline (no polling: a
/// waiter is resumed by the send itself, or by its timer).
public final class PacketLog: Sendable {
    private struct State {
        var packets: [HCIPacket] = []
        var read = 0
        var waiter: (id: Int, continuation: CheckedContinuation<HCIPacket?, Never>)?
        var nextWaiter = 0
    }
    private let state = Lock(State())

    public func append(_ packet: HCIPacket) {
        let waiter: CheckedContinuation<HCIPacket?, Never>? = state.withLock { state in
            state.packets.append(packet)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.read += 1
            return waiter.continuation
        }
        waiter?.resume(returning: packet)
    }

    public var all: [HCIPacket] { state.withLock { $0.packets } }

    public func next(_ what: String = "a packet from the host", timeout: Duration = .seconds(5)) async throws -> HCIPacket {
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
        guard let packet else { throw DeadlineExceeded(what: what) }
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

    public func nextACL(timeout: Duration = .seconds(5)) async throws -> ACLDataPacket {
        let packet = try await next("an ACL packet", timeout: timeout)
        guard packet.type == .acl else { throw DeadlineExceeded(what: "an ACL packet, got \(packet.type)") }
        return try ACLDataPacket(decoding: packet.bytes)
    }
}

/// A scripted LE controller: answers bring-up, acknowledges LE Connection Update with
/// Command Status, and checks that the host never has more ACL packets inside it than it
/// has buffers. Credits come back only when the test says so (flow-control tests), or at
/// once when `returnsCreditsAtOnce` (tests of the layers above, which are not about them).
public final class TestChip: Sendable {
    public let aclLength: UInt16
    public let aclCount: UInt8
    public let returnsCreditsAtOnce: Bool
    private struct Counters { var inFlight = 0; var maximumInFlight = 0; var recording = false }
    private let counters = Lock(Counters())
    public let log = PacketLog()

    public init(aclLength: UInt16, aclCount: UInt8, returnsCreditsAtOnce: Bool = false) {
        self.aclLength = aclLength
        self.aclCount = aclCount
        self.returnsCreditsAtOnce = returnsCreditsAtOnce
    }

    public var maximumInFlight: Int { counters.withLock { $0.maximumInFlight } }
    public func startRecording() { counters.withLock { $0.recording = true } }

    /// The controller freed `count` buffers (the test then injects the event).
    public func release(_ count: Int) { counters.withLock { $0.inFlight -= count } }

    public func answer(_ packet: HCIPacket) -> [HCIPacket] {
        let recording = counters.withLock { counters in
            if packet.type == .acl {
                counters.inFlight += 1
                counters.maximumInFlight = max(counters.maximumInFlight, counters.inFlight)
            }
            return counters.recording
        }
        if recording { log.append(packet) }
        if packet.type == .acl, returnsCreditsAtOnce, let acl = try? ACLDataPacket(decoding: packet.bytes) {
            release(1)
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

/// A powered-on controller on a scripted transport with a channel manager attached: for
/// L2CAP's own tests and for the bearers above it (ATT over L2CAP).
public struct L2CAPHarness: Sendable {
    public let chip: TestChip
    public let transport: ScriptedTransport
    public let controller: HCIController
    public let manager: ChannelManager

    public static let peer = BluetoothAddress(0xC44B_4D00_0001)

    public static func make(
        aclLength: UInt16 = 27, aclCount: UInt8 = 4, returnsCreditsAtOnce: Bool = false,
        configuration: ChannelManager.Configuration = .init(signalingTimeout: unhurried), logs: LogCapture? = nil
    ) async throws -> L2CAPHarness {
        let chip = TestChip(aclLength: aclLength, aclCount: aclCount, returnsCreditsAtOnce: returnsCreditsAtOnce)
        let transport = ScriptedTransport { chip.answer($0) }
        let controller = HCIController(transport: transport, logger: LogCapture.logger(HCIController.defaultLogLabel, from: logs))
        try controller.start()
        let manager = ChannelManager(
            controller: controller, configuration: configuration,
            logger: LogCapture.logger(ChannelManager.defaultLogLabel, from: logs))
        try await controller.powerOn()
        chip.startRecording()
        return L2CAPHarness(chip: chip, transport: transport, controller: controller, manager: manager)
    }

    public var log: PacketLog { chip.log }

    public func inject(_ event: HCIEvent) async {
        transport.inject([HCIPacket(.event, event.encode())])
        await transport.drain()
    }

    /// ACL packets from the peer, in order.
    public func inject(_ packets: [ACLDataPacket]) async {
        transport.inject(packets.map { HCIPacket(.acl, $0.encode()) })
        await transport.drain()
    }

    /// LE Enhanced Connection Complete v2 for `handle`.
    public func connect(_ handle: UInt16, role: ConnectionRole = .central) async {
        await inject(Self.connectionComplete(handle, role: role))
    }

    /// LE Enhanced Connection Complete v2 for `handle`, from ``peer``.
    public static func connectionComplete(_ handle: UInt16, role: ConnectionRole = .central) -> HCIEvent {
        .le(.enhancedConnectionComplete(LEEnhancedConnectionComplete(
            version: .v2(advertisingHandle: 0xFF, syncHandle: 0xFFFF), status: .success,
            connectionHandle: handle, role: role, peerAddressType: .random, peerAddress: Self.peer,
            localResolvablePrivateAddress: BluetoothAddress(0), peerResolvablePrivateAddress: BluetoothAddress(0),
            connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 72, centralClockAccuracy: 0
        )))
    }

    public func disconnect(_ handle: UInt16, reason: HCIErrorCode) async {
        await inject(.disconnectionComplete(HCIEvent.DisconnectionComplete(status: .success, connectionHandle: handle, reason: reason)))
    }

    /// The controller reports `count` packets of `handle` done.
    public func complete(_ handle: UInt16, _ count: Int = 1) async {
        chip.release(count)
        await inject(.numberOfCompletedPackets(HCIEvent.NumberOfCompletedPackets(
            completions: [.init(connectionHandle: handle, completedPackets: UInt16(count))])))
    }

    /// A whole B-frame from the peer in one ACL packet.
    public func receive(_ payload: [UInt8], cid: ChannelIdentifier, handle: UInt16) async {
        await inject([ACLDataPacket(connectionHandle: handle, packetBoundary: .firstFlushable, data: BasicFrame(channelID: cid, payload: payload).encode())])
    }
}
