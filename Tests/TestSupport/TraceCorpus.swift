import ATT
import BluetoothCore
import HCI
import HCITransport
import L2CAP
import SMP

/// A capture holding every packet kind the stack declares, well-formed and malformed: each
/// HCI command type, each modelled event and LE subevent, each ATT opcode, SMP code and LE
/// signaling code (on one LE link, fragmented once), then the same PDUs cut short. The
/// trace decoder is checked against tshark on it, beside the captures the suites write.
///
/// Parameters are found, not written out: for each type the shortest all-zero (else
/// all-one) parameter block its own decoder accepts, so a type added to the stack joins the
/// corpus with no edit here.
public enum TraceCorpus {
    public static let handle: UInt16 = 0x0040

    public static func records() -> [(packet: HCIPacket, direction: PacketDirection)] {
        var records: [(HCIPacket, PacketDirection)] = []
        for type in HCICommands.all {
            guard let parameters = shortest({ bytes in
                var reader = ByteReader(bytes)
                _ = try type.init(parameters: &reader)
                try reader.expectEnd()
            }) else { continue }
            let opcode = type.opcode.rawValue
            records.append((HCIPacket(.command, [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters), .hostToController))
        }
        let events: [[UInt8]] = [[0x05], [0x08], [0x0E], [0x0F], [0x10], [0x13], [0x1A], [0x30], [0x59]]
            + [0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x0A, 0x0B, 0x0C, 0x0D, 0x11, 0x12, 0x13, 0x14, 0x29].map { [0x3E, $0] }
        for prefix in events {
            let code = prefix[0], rest = Array(prefix.dropFirst())
            guard let parameters = shortest({ bytes in _ = try HCIEvent(decoding: [code, UInt8(rest.count + bytes.count)] + rest + bytes) }) else { continue }
            records.append((HCIPacket(.event, [code, UInt8(rest.count + parameters.count)] + rest + parameters), .controllerToHost))
        }
        // A vendor event and an unknown command: shown in hex, never an abort.
        records.append((HCIPacket(.event, [0xFF, 0x03, 0x01, 0x02, 0x03]), .controllerToHost))
        records.append((HCIPacket(.command, [0x01, 0xFC, 0x02, 0xAA, 0xBB]), .hostToController))

        let attOpcodes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10,
                                   0x11, 0x12, 0x13, 0x16, 0x17, 0x18, 0x19, 0x1B, 0x1D, 0x1E, 0x20, 0x21, 0x23, 0x52, 0xD2]
        var pdus: [(channel: UInt16, pdu: [UInt8])] = []
        // The two lists whose first byte is an element length that zeros or ones cannot
        // satisfy: one element each.
        let lists: [UInt8: [UInt8]] = [0x09: [0x04, 0x03, 0x00, 0x01, 0x02], 0x11: [0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18]]
        for opcode in attOpcodes {
            guard let body = lists[opcode] ?? shortest({ bytes in _ = try ATTPDU(decoding: [opcode] + bytes) }, from: 0) else { continue }
            pdus.append((0x0004, [opcode] + body))
        }
        for code in UInt8(0x01)...0x0E {
            guard let body = shortest({ bytes in
                do { _ = try SMPPDU(decoding: [code] + bytes) } catch { throw DecodeError.truncated(needed: 0, available: 0) }
            }, from: 0) else { continue }
            pdus.append((0x0006, [code] + body))
        }
        for code: UInt8 in [0x01, 0x06, 0x07, 0x12, 0x13, 0x14, 0x15, 0x16] {
            let data = [UInt8](repeating: 0, count: code == 0x12 ? 8 : code == 0x14 || code == 0x15 ? 10 : code == 0x16 ? 4 : code == 0x01 ? 2 : code == 0x13 ? 2 : 4)
            pdus.append((0x0005, [code, 0x01, UInt8(data.count), 0x00] + data))
        }
        for (number, item) in pdus.enumerated() {
            records.append(acl(frame(item.channel, item.pdu), direction: number % 2 == 0 ? .hostToController : .controllerToHost))
        }
        // One PDU in two fragments, then every ATT and SMP PDU cut short by one byte.
        let long = frame(0x0004, [0x0B] + [UInt8](repeating: 0x5A, count: 40))
        records.append(acl(Array(long.prefix(20)), direction: .controllerToHost))
        records.append(acl(Array(long.dropFirst(20)), direction: .controllerToHost, boundary: .continuing))
        for item in pdus where item.channel != 0x0005 && item.pdu.count > 1 {
            records.append(acl(frame(item.channel, Array(item.pdu.dropLast())), direction: .controllerToHost))
        }
        return records
    }

    public static func write(to path: String) throws {
        let writer = try BTSnoopWriter(path: path)
        defer { writer.close() }
        for (packet, direction) in records() { try writer.write(packet, direction: direction) }
    }

    static func frame(_ channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
    }

    static func acl(_ data: [UInt8], direction: PacketDirection, boundary: ACLDataPacket.PacketBoundary = .firstFlushable) -> (HCIPacket, PacketDirection) {
        let packet = ACLDataPacket(connectionHandle: handle, packetBoundary: direction == .hostToController ? (boundary == .continuing ? .continuing : .firstNonFlushable) : boundary, data: data)
        return (HCIPacket(.acl, packet.encode()), direction)
    }

    /// The shortest block of zeros, else of ones, that `decodes` accepts (up to 80 bytes).
    static func shortest(_ decodes: ([UInt8]) throws -> Void, from start: Int = 0) -> [UInt8]? {
        for fill: UInt8 in [0x00, 0x01] {
            for count in start...80 {
                let bytes = [UInt8](repeating: fill, count: count)
                if (try? decodes(bytes)) != nil { return bytes }
            }
        }
        return nil
    }
}
