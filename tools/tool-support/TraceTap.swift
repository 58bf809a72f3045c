import BluetoothCore
import Glibc
import HCITransport
import Trace

/// Every packet a tool sends and receives, decoded as `bareble-trace` shows it, handed to
/// a sink as it crosses (on the thread that moves it; the decoder's state is behind a
/// lock, and the sink runs outside it, so two threads' packets may reach it out of order:
/// their numbers keep the order they were decoded in). `--trace` prints each one on stderr;
/// `bareble-central hci` and `att` collect them.
public final class TraceTap: Sendable {
    private let decoder: Lock<(decoder: TraceDecoder, number: Int)>
    private let sink: @Sendable (TracePacket) -> Void

    public init(withFields: Bool, sink: @escaping @Sendable (TracePacket) -> Void) {
        decoder = Lock((decoder: TraceDecoder(withFields: withFields), number: 0))
        self.sink = sink
    }

    /// `--trace`: one line per packet on stderr.
    public convenience init() {
        let color = isatty(2) == 1 && getenv("NO_COLOR") == nil
        self.init(withFields: false) { printError(TraceOutput.text($0, verbose: false, color: color)) }
    }

    /// Packets decoded so far: the number the next one gets, less one.
    public var decodedCount: Int { decoder.withLock { $0.number } }

    public func observe(_ packet: HCIPacket, _ direction: PacketDirection) {
        let opcode: MonitorRecord.Opcode = switch (packet.type, direction) {
        case (.command, _): .commandPacket
        case (.event, _): .eventPacket
        case (.acl, .hostToController): .aclTransmit
        case (.acl, .controllerToHost): .aclReceive
        case (.sco, .hostToController): .scoTransmit
        case (.sco, .controllerToHost): .scoReceive
        case (.iso, .hostToController): .isoTransmit
        case (.iso, .controllerToHost): .isoReceive
        }
        let timestamp = BTSnoop.now() - BTSnoop.epochOffset
        let decoded = decoder.withLock { state in
            state.number += 1
            return state.decoder.decode(CaptureRecord(number: state.number, index: 0, opcode: opcode, timestamp: timestamp, payload: packet.bytes))
        }
        sink(decoded)
    }
}
