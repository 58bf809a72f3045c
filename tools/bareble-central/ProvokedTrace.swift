import BluetoothCore
import Glibc
import ToolSupport
import Trace

/// What a provoking subcommand (`hci`, `att`) caused, decoded by the trace decoder as it
/// crossed the transport: the packets, collected until one answers or a deadline passes.
///
/// The decoded packets wait in a stream bounded at ``bound`` (a peer or controller that
/// floods the window cannot grow it): past it the oldest go, counted in ``dropped`` and
/// said in the output.
final class ProvokedTrace: Sendable {
    static let bound = 4096

    private enum Item: Sendable {
        case packet(TracePacket)
        /// A collection's deadline passed; its number tells stale deadlines apart.
        case deadline(Int)
    }

    let tap: TraceTap
    private let stream: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation
    private let counts = Lock((dropped: 0, collections: 0))

    init() {
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingNewest(Self.bound))
        let counts = self.counts
        self.stream = stream
        self.continuation = continuation
        tap = TraceTap(withFields: true) { packet in
            if case .dropped = continuation.yield(.packet(packet)) { counts.withLock { $0.dropped += 1 } }
        }
    }

    /// Packets that fell out of the bounded stream.
    var dropped: Int { counts.withLock { $0.dropped } }

    /// The packets decoded from now until `stop` accepts one (returned as `answer`) or
    /// `within` has passed, in the order they were decoded.
    func collect(within: Duration, stop: (TracePacket) -> Bool = { _ in false }) async -> (packets: [TracePacket], answer: TracePacket?) {
        let token = counts.withLock { counts in
            counts.collections += 1
            return counts.collections
        }
        let continuation = self.continuation
        // A deadline, not a poll: the collection ends at the first of the answer and this.
        let timer = Task {
            do { try await Task.sleep(for: within) } catch { return }
            continuation.yield(.deadline(token))
        }
        defer { timer.cancel() }
        var packets: [TracePacket] = []
        for await item in stream {
            switch item {
            case let .packet(packet):
                packets.append(packet)
                if stop(packet) { return (packets.sorted { $0.number < $1.number }, packet) }
            case let .deadline(number) where number == token:
                return (packets.sorted { $0.number < $1.number }, nil)
            case .deadline:
                continue
            }
        }
        return (packets.sorted { $0.number < $1.number }, nil)
    }

    /// Prints `packets` as `bareble-trace -v` does (text with fields, or JSON lines).
    static func print(_ packets: [TracePacket], json: Bool) {
        let color = !json && isatty(1) == 1 && getenv("NO_COLOR") == nil
        var writer = JSONWriter()
        var clock = WallClock.ISO8601Formatter()
        for packet in packets {
            if json {
                TraceOutput.json(packet, into: &writer, clock: &clock)
                writer.newline()
            } else {
                writer.bytes += Array(TraceOutput.text(packet, verbose: true, color: color).utf8)
                writer.bytes.append(UInt8(ascii: "\n"))
            }
        }
        writeOut(writer.bytes)
    }
}
