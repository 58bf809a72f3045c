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
    /// Bytes of `--trace` lines that may wait for a stderr that is not being read.
    public static let queueLimit = 1024 * 1024
    private let decoder: Lock<(decoder: TraceDecoder, number: Int)>
    private let sink: @Sendable (TracePacket) -> Void
    /// `--trace`'s stderr: the reader thread never waits for it.
    private let output: QueuedOutput?
    private let fd: Int32

    public init(withFields: Bool, sink: @escaping @Sendable (TracePacket) -> Void) {
        decoder = Lock((decoder: TraceDecoder(withFields: withFields), number: 0))
        self.sink = sink
        output = nil
        fd = 2
    }

    /// `--trace`: one line per packet on `fd` (stderr). Lines it does not take at once
    /// wait for a thread of their own, up to ``queueLimit`` bytes; past that they are
    /// dropped, and the next line printed says how many.
    public init(printingTo fd: Int32 = 2) {
        let color = isatty(fd) == 1 && getenv("NO_COLOR") == nil
        let output = QueuedOutput(fd: fd, limit: Self.queueLimit, ownsDescriptor: false)
        decoder = Lock((decoder: TraceDecoder(withFields: false), number: 0))
        self.output = output
        self.fd = fd
        sink = { packet in
            let line = TraceOutput.text(packet, verbose: false, color: color) + "\n"
            output.write { refusals in
                guard refusals.sinceLastAccepted > 0 else { return Array(line.utf8) }
                return Array((TraceTap.droppedLine(refusals.sinceLastAccepted) + line).utf8)
            }
        }
    }

    static func droppedLine(_ count: Int) -> String {
        "= \(count) trace lines dropped: stderr was not read as fast as packets came\n"
    }

    /// Bytes of lines waiting for stderr.
    var queuedBytes: Int { output?.queuedBytes ?? 0 }

    /// Lines dropped because stderr did not keep up.
    public var droppedLines: Int { output?.refusals.total ?? 0 }

    /// Prints what is still queued (waiting up to 2 s for stderr), then how many lines
    /// were dropped, if any. The tool's last packets are in the queue until then.
    public func close() {
        guard let output else { return }
        output.close(within: .seconds(2))
        let dropped = output.refusals.total
        guard dropped > 0 else { return }
        let summary = Array("= --trace: \(dropped) lines dropped in all: stderr was not read as fast as packets came\n".utf8)
        _ = summary.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
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
