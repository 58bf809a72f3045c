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
}
