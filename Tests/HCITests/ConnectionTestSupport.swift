import BluetoothCore
@testable import HCI
import HCITransport
import TestSupport

/// A scripted controller for connection tests: FakeChip's bring-up, Command Status for the
/// commands that finish with an event, Command Complete for the others, and per-opcode
/// scripts that add the events a real controller would send next.
final class ConnectionBench: Sendable {
    typealias Script = @Sendable (HCIPacket) -> [HCIPacket]

    let transport: ScriptedTransport
    let controller: HCIController
    let connector: Connector
    let chip: FakeChip
    private let book = ScriptBook()

    final class ScriptBook: Sendable {
        let scripts = Lock<[HCIOpcode: Script]>([:])
    }

    static let peer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)
    static let otherPeer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0003), type: .random)

    /// `extended`: the chip lists LE Extended Create Connection. `cancelTimeout` is
    /// ``unhurried`` by default so that a loaded machine cannot turn a scripted answer into a
    /// lost cancel (10 s was not enough: under AddressSanitizer in CI the test that answers
    /// a cancel took 47 s to get there).
    static func start(extended: Bool = true, features: LEFeatures? = nil, cancelTimeout: Duration = unhurried, extraCommands: [any HCICommand.Type] = [], logs: LogCapture? = nil) async throws -> ConnectionBench {
        var chip = FakeChip()
        chip.supported += [
            LECreateConnection.self, LECreateConnectionCancel.self, LEConnectionUpdate.self,
            LESetDataLength.self, LESetPHY.self, LEReadPHY.self, Disconnect.self, LESetRandomAddress.self,
        ]
        if extended { chip.supported.append(LEExtendedCreateConnection.self) }
        chip.supported += extraCommands
        if let features { chip.leFeatures = features }
        let bench = ConnectionBench(chip: chip, cancelTimeout: cancelTimeout, logs: logs)
        try bench.controller.start()
        try await bench.controller.powerOn()
        return bench
    }

    private init(chip: FakeChip, cancelTimeout: Duration, logs: LogCapture?) {
        self.chip = chip
        let book = self.book
        transport = ScriptedTransport { packet in
            let opcode = opcodes([packet]).first ?? HCIOpcode(rawValue: 0)
            let script = book.scripts.withLock { $0[opcode] }
            let finishesWithEvent: [HCIOpcode] = [
                LECreateConnection.opcode, LEExtendedCreateConnection.opcode, LEConnectionUpdate.opcode,
                LEReadRemoteFeatures.opcode, LESetPHY.opcode, Disconnect.opcode,
            ]
            var answer: [HCIPacket]
            switch opcode {
            case _ where finishesWithEvent.contains(opcode):
                answer = [Self.status(opcode)]
            case LECreateConnectionCancel.opcode, LESetRandomAddress.opcode:
                answer = [chip.complete(opcode, [])]
            case LESetDataLength.opcode:
                answer = [chip.complete(opcode, [packet.bytes[3], packet.bytes[4]])]
            case LEReadPHY.opcode:
                answer = [chip.complete(opcode, [packet.bytes[3], packet.bytes[4], 0x02, 0x02])]
            default:
                answer = chip.answer(packet)
            }
            if let script { answer = script(packet).isEmpty ? answer : script(packet) }
            return answer
        }
        controller = HCIController(transport: transport, logger: LogCapture.logger(HCIController.defaultLogLabel, from: logs))
        connector = Connector(controller: controller, cancelTimeout: cancelTimeout)
    }

    /// Replaces (when it returns packets) the answer to `opcode`; the answer should include
    /// the Command Status/Complete itself.
    func script(_ opcode: HCIOpcode, _ script: Script?) {
        book.scripts.withLock { $0[opcode] = script }
    }

    func inject(_ events: HCIEvent...) {
        transport.inject(events.map { HCIPacket(.event, $0.encode()) })
    }

    /// The commands sent after bring-up, decoded by opcode.
    var sentAfterBringUp: [HCIPacket] {
        let packets = transport.sent
        guard let index = packets.lastIndex(where: { opcodes([$0]) == [LESetEventMask.opcode] }) else { return packets }
        let bringUpTail = [LEReadMaximumDataLength.opcode, LEReadNumberOfSupportedAdvertisingSets.opcode]
        return packets[(index + 1)...].filter { !bringUpTail.contains(opcodes([$0]).first ?? HCIOpcode(rawValue: 0)) }
    }

    func sentOpcodes() -> [HCIOpcode] { opcodes(sentAfterBringUp) }

    /// The parameters of the last command with `opcode`.
    func lastParameters(_ opcode: HCIOpcode) -> [UInt8]? {
        sentAfterBringUp.last { opcodes([$0]) == [opcode] }.map { Array($0.bytes.dropFirst(3)) }
    }

    static func status(_ opcode: HCIOpcode, _ status: HCIErrorCode = .success) -> HCIPacket {
        HCIPacket(.event, HCIEvent.commandStatus(.init(status: status, numHCICommandPackets: 1, opcode: opcode)).encode())
    }

    static func event(_ event: HCIEvent) -> HCIPacket { HCIPacket(.event, event.encode()) }

    static let timing = ConnectionTiming(connectionInterval: 40, peripheralLatency: 0, supervisionTimeout: 400)

    static func legacyComplete(_ status: HCIErrorCode = .success, handle: UInt16 = 0x0040, role: ConnectionRole = .central, peer: DeviceAddress = peer) -> HCIEvent {
        .le(.connectionComplete(LEConnectionComplete(
            status: status, connectionHandle: handle, role: role, peerAddressType: ReportedAddressType(peer.type),
            peerAddress: peer.address, connectionInterval: 40, peripheralLatency: 0, supervisionTimeout: 400,
            centralClockAccuracy: 0)))
    }

    static func enhancedComplete(_ status: HCIErrorCode = .success, handle: UInt16 = 0x0040, role: ConnectionRole = .central, peer: DeviceAddress = peer, v2: Bool = false) -> HCIEvent {
        .le(.enhancedConnectionComplete(LEEnhancedConnectionComplete(
            version: v2 ? .v2(advertisingHandle: 0xFF, syncHandle: 0xFFFF) : .v1,
            status: status, connectionHandle: handle, role: role, peerAddressType: ReportedAddressType(peer.type),
            peerAddress: peer.address, localResolvablePrivateAddress: BluetoothAddress(0), peerResolvablePrivateAddress: BluetoothAddress(0),
            connectionInterval: 40, peripheralLatency: 0, supervisionTimeout: 400, centralClockAccuracy: 0)))
    }

    static func disconnection(handle: UInt16 = 0x0040, reason: HCIErrorCode) -> HCIEvent {
        .disconnectionComplete(.init(status: .success, connectionHandle: handle, reason: reason))
    }

    /// Answers the create command with Command Status and, right behind it, `completion`.
    func completeCreateWith(_ completion: HCIEvent) {
        let script: Script = { packet in [Self.status(opcodes([packet])[0]), Self.event(completion)] }
        self.script(LEExtendedCreateConnection.opcode, script)
        self.script(LECreateConnection.opcode, script)
    }

    /// Connects to `peer` with the completion coming right behind the create command.
    func connected(handle: UInt16 = 0x0040, peer: DeviceAddress = ConnectionBench.peer) async throws -> Connection {
        completeCreateWith(Self.enhancedComplete(handle: handle, peer: peer))
        defer {
            script(LEExtendedCreateConnection.opcode, nil)
            script(LECreateConnection.opcode, nil)
        }
        return try await connector.connect(to: peer, timeout: .seconds(5))
    }
}
