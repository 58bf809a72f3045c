import BluetoothCore
import Trace

/// How a decoded trace packet is printed: one JSON object per packet, or btmon's compact
/// text (one line, and the fields indented below it with `verbose`), coloured on a
/// terminal. Shared by `bareble-trace` and the other tools' `--trace`.
public enum TraceOutput {
    /// One JSON object, no newline. `clock` formats the time (a stream keeps one: it writes
    /// the date once per second).
    public static func json(_ packet: TracePacket, into writer: inout JSONWriter, clock: inout WallClock.ISO8601Formatter) {
        writer.beginObject()
        writer.member("n")
        writer.int(packet.number)
        writer.member("time")
        writer.asciiString { clock.append(packet.timestamp &* 1000, to: &$0) }
        writer.member("index")
        writer.int(Int(packet.index))
        writer.member("record")
        writer.int(Int(packet.record))
        writer.member("direction")
        writer.string(packet.direction.rawValue)
        writer.member("type")
        writer.string(packet.kind)
        writer.member("name")
        writer.string(packet.name)
        if let opcode = packet.opcode { writer.member("opcode"); writer.int(Int(opcode)) }
        if let event = packet.event { writer.member("event"); writer.int(Int(event)) }
        if let subevent = packet.subevent { writer.member("subevent"); writer.int(Int(subevent)) }
        if let connection = packet.connection { writer.member("connection"); writer.int(Int(connection)) }
        if let channel = packet.channel { writer.member("cid"); writer.int(Int(channel)) }
        if let opcode = packet.attOpcode { writer.member("attOpcode"); writer.int(Int(opcode)) }
        if let handle = packet.attHandle { writer.member("attHandle"); writer.int(Int(handle)) }
        if let code = packet.smpCode { writer.member("smpCode"); writer.int(Int(code)) }
        if let answers = packet.answers {
            writer.member("answers")
            writer.int(answers.number)
            writer.member("rttMicroseconds")
            writer.int(Int(answers.microseconds))
        }
        if !packet.summary.isEmpty { writer.member("summary"); writer.string(packet.summary) }
        if !packet.fields.isEmpty {
            // Pairs, not an object: a report's AD structures may repeat a label.
            writer.member("fields")
            writer.beginArray()
            for (label, value) in packet.fields {
                writer.beginArray()
                writer.string(label)
                writer.string(value)
                writer.endArray()
            }
            writer.endArray()
        }
        if !packet.hex.isEmpty { writer.member("hex"); writer.hex(packet.hex) }
        if let problem = packet.problem { writer.member("problem"); writer.string(problem) }
        writer.endObject()
    }

    /// btmon's shape: direction, name, summary, then index, packet number and time.
    public static func text(_ packet: TracePacket, verbose: Bool, color: Bool) -> String {
        let arrow = switch packet.direction {
        case .sent: "<"
        case .received: ">"
        case .note: "="
        }
        // Summaries and fields carry what peers sent (advertised names, decoded strings):
        // control characters in them are shown escaped, never sent to the terminal.
        var line = "\(arrow) \(packet.name)"
        if !packet.summary.isEmpty { line += ": \(TerminalText.printable(packet.summary))" }
        if let answers = packet.answers { line += " [answers #\(answers.number) in \(answers.microseconds) µs]" }
        if let problem = packet.problem { line += " (malformed: \(problem))" }
        var time: [UInt8] = []
        WallClock.appendISO8601(packet.timestamp &* 1000, to: &time)
        let clock = String(decoding: time.dropFirst(11).dropLast(), as: UTF8.self)
        let place = "  #\(packet.number) [hci\(packet.index)] \(clock)"
        if color {
            let tint = switch packet.direction {
            case .sent: "\u{1B}[32m"
            case .received: "\u{1B}[35m"
            case .note: "\u{1B}[33m"
            }
            line = tint + line + "\u{1B}[0m" + "\u{1B}[2m" + place + "\u{1B}[0m"
        } else {
            line += place
        }
        guard verbose else { return line }
        for (label, value) in packet.fields { line += "\n        \(label): \(TerminalText.printable(value))" }
        if !packet.hex.isEmpty { line += "\n        " + Hex.string(packet.hex) }
        return line
    }
}
