import BluetoothCore
import HCITransport
import Testing
import TestSupport
import Trace

/// The decoder on the corpus of every packet kind, and on a scripted ATT exchange.
@Suite struct TraceDecoderTests {
    static func decode(_ records: [(packet: HCIPacket, direction: PacketDirection)]) -> [TracePacket] {
        var decoder = TraceDecoder()
        return records.enumerated().map { number, record in
            let opcode: MonitorRecord.Opcode = switch (record.packet.type, record.direction) {
            case (.command, _): .commandPacket
            case (.event, _): .eventPacket
            case (.acl, .hostToController): .aclTransmit
            default: .aclReceive
            }
            return decoder.decode(CaptureRecord(number: number + 1, index: 0, opcode: opcode, timestamp: Int64(number), payload: record.packet.bytes))
        }
    }

    @Test func everyKindDecodesAndEveryCutOneSaysSo() {
        let records = TraceCorpus.records()
        let packets = Self.decode(records)
        #expect(packets.count > 150)
        let commands = packets.filter { $0.kind == "command" }
        #expect(commands.count >= 60)
        // Every command the stack declares, by name, its fields decoded.
        #expect(commands.dropLast().allSatisfy { $0.problem == nil && !$0.name.hasPrefix("opcode") })
        #expect(commands.last?.hex == [0xAA, 0xBB])
        let att = packets.filter { $0.attOpcode != nil }
        let wellFormed = att.prefix { $0.problem == nil }
        #expect(wellFormed.count >= 31, "\(att.map(\.name))")
        #expect(Set(wellFormed.compactMap(\.attOpcode)).count == 31)
        // The cut ones: each names its problem, keeps its hex, and still its handle where
        // the bytes reach it.
        let cut = att.filter { $0.problem != nil }
        #expect(cut.count >= 20 && cut.allSatisfy { !$0.hex.isEmpty })
        let smp = packets.filter { $0.smpCode != nil }
        #expect(smp.filter { $0.problem == nil }.count == 14)
        #expect(packets.contains { $0.name == "L2CAP_CONNECTION_PARAMETER_UPDATE_REQ" })
        #expect(packets.filter { $0.smpCode != nil && $0.problem != nil }.allSatisfy { $0.name != "SMP" })
        // The two fragments: the first waits, the second completes the Read Response.
        let fragments = packets.filter { $0.summary.hasPrefix("fragment") }
        #expect(fragments.count == 1)
    }

    @Test func requestsAreJoinedToAnswersAndHandlesNamed() {
        func acl(_ payload: [UInt8], _ direction: PacketDirection) -> (packet: HCIPacket, direction: PacketDirection) {
            let frame = [UInt8(payload.count), 0, 0x04, 0x00] + payload
            return (HCIPacket(.acl, [0x40, 0x00, UInt8(frame.count), 0] + frame), direction)
        }
        let packets = Self.decode([
            // Read By Type (characteristics) and its answer: the value handle 0x0003 is Device Name.
            acl([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], .hostToController),
            acl([0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A], .controllerToHost),
            acl([0x0A, 0x03, 0x00], .hostToController),
            acl([0x0B, 0x41, 0x42], .controllerToHost),
        ])
        #expect(packets[1].answers?.number == 1 && packets[1].answers?.microseconds == 1)
        #expect(packets[2].summary == "handle 0x0003 (Device Name)")
        #expect(packets[3].answers?.number == 3 && packets[3].attHandle == 0x0003)
        #expect(packets[3].name == "ATT Read Response")
    }

    /// The host answers the peer's Read Request after the controller reported the link
    /// gone but before the host read that event (seen in a CI capture): the answer is still
    /// joined and named, and says it came late. A new connection on the handle starts clean.
    @Test func anAnswerSentAfterTheDisconnectionIsJoinedToTheLinkThatEnded() {
        let peer = BluetoothAddress(0x49DB_979A_B81F)
        let packets = Self.decode([
            AddressFilterTests.connected(0x0001, peer: peer),
            AddressFilterTests.acl(0x0001, cid: 4, [0x0A, 0x15, 0x00], .controllerToHost),
            AddressFilterTests.disconnected(0x0001),
            AddressFilterTests.acl(0x0001, cid: 4, [0x0B, 0x41, 0x42], .hostToController),
            AddressFilterTests.connected(0x0001, peer: peer),
            AddressFilterTests.acl(0x0001, cid: 4, [0x0A, 0x16, 0x00], .controllerToHost),
            AddressFilterTests.acl(0x0001, cid: 4, [0x0B, 0x41, 0x42], .hostToController),
        ])
        #expect(packets[3].answers?.number == 2 && packets[3].attHandle == 0x0015)
        #expect(packets[3].addresses == [peer])
        #expect(packets[3].summary == "handle 0x0015; after the link's Disconnection Complete (#3)")
        #expect(packets[6].answers?.number == 6 && packets[6].attHandle == 0x0016)
        #expect(packets[6].summary == "handle 0x0016")
    }

    /// Connections that ended make room for new ones before any live one is forgotten.
    @Test func endedConnectionsAreForgottenFirstAndUncounted() {
        var decoder = TraceDecoder(withFields: false)
        var number = 0
        func decode(_ record: (HCIPacket, PacketDirection)) {
            number += 1
            _ = decoder.decode(CaptureRecord(number: number, index: 0, opcode: record.1 == .hostToController ? .aclTransmit : .eventPacket, timestamp: 0, payload: record.0.bytes))
        }
        // The oldest connection stays up throughout; hundreds after it come and go.
        let live: UInt16 = 0x0EFE
        decode(AddressFilterTests.connected(live, peer: BluetoothAddress(0xC0FF_EE00_0001)))
        for handle in 0..<UInt16(3 * TraceDecoder.maximumConnections) {
            decode(AddressFilterTests.connected(handle, peer: BluetoothAddress(UInt64(handle) + 1)))
            decode(AddressFilterTests.disconnected(handle))
        }
        #expect(decoder.forgottenConnections == 0)
        // Still known: an ended one was forgotten each time room was needed, not it.
        number += 1
        let request = AddressFilterTests.acl(live, cid: 4, [0x0A, 0x03, 0x00], .controllerToHost)
        let packet = decoder.decode(CaptureRecord(number: number, index: 0, opcode: .aclReceive, timestamp: 0, payload: request.0.bytes))
        #expect(packet.addresses == [BluetoothAddress(0xC0FF_EE00_0001)])
        // Past the bound with every tracked connection live: the oldest live ones go, counted.
        for handle in 0..<UInt16(TraceDecoder.maximumConnections + 5) {
            decode(AddressFilterTests.connected(0x0E00 - handle, peer: BluetoothAddress(UInt64(handle) + 1)))
        }
        #expect(decoder.forgottenConnections == 6)
    }

    /// A capture that starts a PDU (and a request) on 20,000 connections it never opened:
    /// the state held stays bounded and the loss is counted.
    @Test func statePerConnectionIsBounded() {
        var decoder = TraceDecoder(withFields: false)
        for number in 0..<20_000 {
            let handle = UInt16(number % 0x0EFF)
            // A start fragment announcing 100 bytes with 7 present, then a whole request.
            let fragment: [UInt8] = [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, 11, 0, 100, 0, 0x04, 0x00, 0x0A, 0x03, 0x00]
            _ = decoder.decode(CaptureRecord(number: number, index: UInt16(number / 0x0EFF), opcode: .aclReceive, timestamp: 0, payload: fragment))
            let request: [UInt8] = [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, 7, 0, 3, 0, 0x04, 0x00, 0x0A, 0x03, 0x00]
            _ = decoder.decode(CaptureRecord(number: number, index: UInt16(number / 0x0EFF), opcode: .aclTransmit, timestamp: 0, payload: request))
            #expect(decoder.trackedSides <= 2 * TraceDecoder.maximumConnections)
        }
        #expect(decoder.forgottenSides > 0)
    }
}
