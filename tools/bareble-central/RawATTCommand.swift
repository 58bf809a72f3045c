import ArgumentParser
import ATT
import BareBLE
import BluetoothCore
import HCI
import L2CAP
import ToolSupport
import Trace

/// `bareble-central att ADDR HEX`: any ATT PDU, verbatim, on a fresh connection's ATT
/// channel, and the peer's answer (or its silence) decoded by the trace decoder.
struct RawATT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "att",
        abstract: "Connect, send any ATT PDU as given on the ATT channel, and print the peer's answer decoded, or that none came.",
        discussion: """
            HEX is the whole PDU, opcode first (0a0300 is a Read Request for handle 0x0003), \
            sent as is: malformed, or longer than the ATT_MTU, as long as L2CAP carries it \
            (65,535 bytes). It goes out once the connection is up and the MTU exchanged, beside \
            BareBLE's own ATT client, which leaves the answer alone. The answer is the first \
            response, Error Response or confirmation the peer sends back within --wait \
            seconds; printed as `bareble-trace -v` shows packets, with every ATT packet of the \
            connection from the PDU on. A command, a notification and many malformed PDUs get \
            none: the silence is said after --wait, which is this tool's choice, not ATT's \
            30-second transaction timeout. Needs BareBLE's own L2CAP (not hci-raw:N, where the \
            kernel carries ATT: run `bareble-trace live` beside another tool there).
            """
    )

    @OptionGroup var device: PeripheralOptions

    @Argument(help: "The ATT PDU as hex, opcode first.")
    var pdu: String

    @Option(help: "Seconds to wait for an answer after sending.")
    var wait: Double = 5

    @Flag(help: "One JSON object per packet, as bareble-trace --json; silence is {\"answer\":null,...}.")
    var json = false

    func validate() throws {
        guard let bytes = Hex.bytes(pdu) else { throw ValidationError("\(pdu) is not hex: give pairs of hex digits such as 0a0300") }
        guard bytes.count <= BasicFrame.maximumPayloadLength else {
            throw ValidationError("\(bytes.count) bytes: an L2CAP frame carries at most \(BasicFrame.maximumPayloadLength)")
        }
        guard wait.isFinite, wait > 0, wait < 1e6 else { throw ValidationError("--wait \(wait) is not a positive number of seconds") }
    }

    func run() async throws {
        let bytes = Hex.bytes(pdu)!
        let trace = ProvokedTrace()
        let outcome = try await device.connect(tap: trace.tap) { _, peripheral in
            guard let handle = peripheral.connection?.handle else {
                throw ToolError("att needs BareBLE's own L2CAP: on hci-raw:N the kernel carries ATT and its packets do not reach this tool; use hci:N, or run `bareble-trace live` beside another tool")
            }
            let mark = trace.tap.decodedCount
            do {
                try peripheral.att.bearer.send(bytes)
            } catch {
                throw ToolError("cannot send the PDU: \(error)")
            }
            let collected = await trace.collect(within: PeripheralOptions.duration(wait)) { packet in
                packet.number > mark && Self.ends(packet, on: handle)
            }
            return (collected.packets.filter { $0.number > mark && Self.belongs($0, to: handle) }, collected.answer)
        }
        ProvokedTrace.print(outcome.0, json: json)
        if trace.dropped > 0 { printError("bareble-central: \(trace.dropped) packets came faster than they were printed and were left out") }
        guard outcome.1 == nil else { return }
        if json {
            var writer = JSONWriter()
            writer.beginObject()
            writer.member("answer")
            writer.null()
            writer.member("waitedMilliseconds")
            writer.int(Int((wait * 1000).rounded()))
            writer.endObject()
            writer.newline()
            writeOut(writer.bytes)
        } else {
            writeOut("no answer from \(device.address) within \(wait) s (--wait): a command, a notification and many malformed PDUs get none; ATT's own transaction timeout (\(ATTConstants.transactionTimeout)) is not what was waited for\n")
        }
    }

    /// The ACL of the connection (fragments, then the ATT PDU they complete) and its end.
    static func belongs(_ packet: TracePacket, to handle: UInt16) -> Bool {
        guard packet.connection == handle else { return false }
        return packet.event == HCIEvent.Code.disconnectionComplete || (packet.kind == "acl" && (packet.channel == nil || packet.channel == ChannelIdentifier.attributeProtocol.rawValue))
    }

    /// What ends the wait: the peer's response, Error Response or confirmation, or the
    /// link's end.
    static func ends(_ packet: TracePacket, on handle: UInt16) -> Bool {
        guard belongs(packet, to: handle) else { return false }
        if packet.event == HCIEvent.Code.disconnectionComplete { return true }
        guard packet.direction == .received, packet.channel != nil, let opcode = packet.attOpcode else { return false }
        let kind = ATTOpcode(rawValue: opcode).kind
        return kind == .response || kind == .confirmation
    }
}
