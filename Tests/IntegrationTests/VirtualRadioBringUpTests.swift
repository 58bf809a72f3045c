import BluetoothCore
import Foundation
import HCI
import HCITransport
import Testing
import TestSupport

/// The stack against the virtual radio (Bumble's controller, patched) over tcp:.
@Suite(.serialized) struct VirtualRadioBringUp {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral", "--advertiser"]) }

    func capturePath(_ name: String) -> String {
        TestScratch.root + "/\(name).btsnoop"
    }

    @Test func bringUpHardwareErrorRecoveryAndCleanCapture() async throws {
        let harness = try Self.harness.get()
        let path = capturePath("bring-up")
        let base = try TransportSpec(parsing: "tcp:127.0.0.1:\(harness.radio.tcpPort)").open()
        let transport = CapturingTransport(base, writer: try BTSnoopWriter(path: path, datalink: .h4))
        let controller = HCIController(transport: transport)
        try controller.start()

        let info = try await controller.powerOn()
        // The address the radio gave this client is the one bring-up read.
        let client = try await harness.clientID(address: info.address.description)
        #expect(info.address.description.hasPrefix("F0:0D:00:00:00:"))
        #expect(info.aclBuffer.packetLength > 0 && info.aclBuffer.packetCount > 0)
        #expect(info.leFeatures.contains(.leEncryption))
        #expect(info.supports(LESetExtendedScanEnable.self))
        #expect(info.leEventMask.contains(.extendedAdvertisingReport))

        // The radio injects a Hardware Error; the driver reports it, resets, brings up again.
        var updates = controller.statusUpdates().makeAsyncIterator()
        #expect(await updates.next() == .ready(info))
        try await harness.control("hardware-error 66 \(client)")
        #expect(await updates.next() == .recovering(hardwareCode: 66))
        #expect(await updates.next() == .bringingUp)
        let recovered = await updates.next()
        #expect(recovered == .ready(info))
        #expect(try await controller.send(ReadBDADDR()).address == info.address)
        #expect(controller.statistics.hardwareErrors == 1)
        #expect(controller.statistics.malformedEvents == 0)
        controller.close()

        // Our own reader and tshark both read the capture; tshark finds nothing malformed.
        let file = try BTSnoopFile(contentsOf: path)
        let packets = file.records.compactMap(\.packet)
        #expect(packets.contains(HCIPacket(.event, [0x10, 0x01, 0x42])))
        #expect(packets.filter { $0 == HCIPacket(.command, Reset().encode()) }.count == 2)
        let report = try await Tshark.check(path)
        #expect(report.packets == file.records.count)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
    }

    @Test func commandsTheControllerDoesNotKnowFailWithItsStatus() async throws {
        let harness = try Self.harness.get()
        let controller = HCIController(transport: try TCPTransport.connect(host: "127.0.0.1", port: harness.radio.tcpPort))
        try controller.start()
        try await controller.powerOn()
        let vendor = HCIOpcode(ogf: HCIOpcode.Group.vendor, ocf: 0x55)
        await #expect(throws: HCIError.commandFailed(vendor, .unknownCommand)) {
            _ = try await controller.send(RawCommand(opcode: vendor))
        }
        controller.close()
    }
}

/// A command BareBLE has no type for, as a researcher would send one.
struct RawCommand: Sendable {
    let opcode: HCIOpcode
}

extension HCIController {
    func send(_ command: RawCommand) async throws(HCIError) -> [UInt8] {
        let answer = try await sendPacket(
            HCIPacket(.command, [UInt8(command.opcode.rawValue & 0xFF), UInt8(command.opcode.rawValue >> 8), 0]),
            opcode: command.opcode, completesWithStatus: false)
        if let status = answer.first, status != 0 { throw .commandFailed(command.opcode, HCIErrorCode(rawValue: status)) }
        return answer
    }
}
