import BluetoothCore
import Glibc
import HCITransport
import Trace

/// `--trace`: every packet a tool sends and receives, decoded as `bareble-trace` shows it,
/// one line each on stderr as it crosses (on the thread that moves it; the decoder's state
/// is behind a lock, and the line is written outside it).
public final class TraceTap: Sendable {
    private let decoder = Lock((decoder: TraceDecoder(withFields: false), number: 0))
    private let color = isatty(2) == 1 && getenv("NO_COLOR") == nil

    public init() {}

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
        printError(TraceOutput.text(decoded, verbose: false, color: color))
    }
}
