import Glibc
import BluetoothCore
import Logging

/// An ``HCITransport`` over one file descriptor: a TCP socket, a UART or pty, or a Linux
/// HCI socket. Built by ``TCPTransport``, ``SerialTransport`` and ``HCISocketTransport``.
public final class DescriptorTransport: HCITransport {
    /// How bytes read from the descriptor become packets.
    public enum Framing: Sendable, Hashable {
        /// A byte stream (TCP, UART, pty): cut by an ``H4Framer``.
        case stream(H4Framer.Configuration)
        /// One whole H4 frame per read() (Linux HCI sockets).
        case packetPerRead
    }

    public var name: String { loop.name }
    public let framing: Framing
    /// How long `send` waits for the descriptor to take a frame.
    public let sendTimeout: Duration
    public let kernelAdapter: Int?

    /// The transport layer's logger label.
    public static let defaultLogLabel = "bareble.transport"

    /// Where frames the reader had to drop are logged.
    public let logger: Logger
    private let loop: DescriptorLoop
    private let counters = Lock(H4Framer.Statistics())

    /// H4 over a byte-stream descriptor the caller already holds (one end of a socketpair, a
    /// bridge's socket, a device node opened its own way). Takes ownership of `fd`. Without
    /// `framing`, a stream socket gets ``H4Framer/Configuration/reliable`` framing (it loses
    /// no byte) and anything else the stall gap of a UART.
    /// `sendTimeout`: how long a send may wait for the stream to take its frame (a UART
    /// held by CTS), after which the stream ends.
    public static func stream(
        fd: Int32, name: String, framing: H4Framer.Configuration? = nil, wait: ReaderWait = .blocking,
        sendTimeout: Duration = .seconds(2), logger: Logger = Logger(label: DescriptorTransport.defaultLogLabel)
    ) throws(TransportError) -> DescriptorTransport {
        let isSocket = Posix.WriteTarget(fd: fd) == .socket
        let loop = try DescriptorLoop(fd: fd, spec: nil, name: name, wait: wait)
        let framing = framing ?? (isSocket ? .controllerToHost.reliable : .controllerToHost)
        return DescriptorTransport(loop: loop, framing: .stream(framing), sendTimeout: sendTimeout, logger: logger)
    }

    init(
        loop: DescriptorLoop, framing: Framing, sendTimeout: Duration = .seconds(2), kernelAdapter: Int? = nil,
        logger: Logger = Logger(label: DescriptorTransport.defaultLogLabel)
    ) {
        self.logger = logger
        self.loop = loop
        self.framing = framing
        self.sendTimeout = sendTimeout
        self.kernelAdapter = kernelAdapter
    }

    /// What the reader had to skip to stay aligned (stream framing), or the frames a
    /// socket returned that did not decode (packet-per-read). Published after each read's
    /// bytes are framed, so it may trail the packets of that read by a moment.
    public var statistics: H4Framer.Statistics { counters.withLock { $0 } }

    public func start(
        receive: @escaping @Sendable (HCIPacket) -> Void,
        closed: @escaping @Sendable (TransportError?) -> Void
    ) throws(TransportError) {
        let loop = self.loop
        switch framing {
        case let .stream(configuration):
            let framer = FramerBox(H4Framer(configuration: configuration))
            try loop.start(chunk: { bytes, now in
                let deliver: (HCIPacket) -> Void = { packet in
                    if !loop.isClosing { receive(packet) }
                }
                if let bytes {
                    framer.framer.feed(bytes, now: now, deliver: deliver)
                } else {
                    framer.framer.expire(now: now, deliver: deliver)
                }
                let statistics = framer.framer.statistics
                let before = self.counters.withLock { counters in
                    defer { counters = statistics }
                    return counters.droppedFrames
                }
                if statistics.droppedFrames != before { self.logDroppedFrames(statistics) }
                return framer.framer.stallDeadline
            }, closed: closed, streamTimeout: sendTimeout)
        case .packetPerRead:
            try loop.start(chunk: { bytes, _ in
                guard let bytes else { return nil }
                do throws(DecodeError) {
                    let packet = try H4Framer.decodeFrame(bytes)
                    self.counters.withLock { $0.packets += 1 }
                    if !loop.isClosing { receive(packet) }
                } catch {
                    let statistics = self.counters.withLock { counters in
                        counters.droppedFrames += 1
                        counters.skippedBytes += bytes.count
                        return counters
                    }
                    self.logDroppedFrames(statistics)
                }
                return nil
            }, closed: closed)
        }
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        try write(packet, waits: true)
    }

    /// On a byte stream, queues what the stream does not take at once for the reader
    /// thread to write (under ``sendTimeout`` of nothing taken); a socket's write as `send`.
    public func post(_ packet: HCIPacket) throws(TransportError) {
        try write(packet, waits: false)
    }

    public func post(_ type: HCIPacketType, header: UnsafeRawBufferPointer, body: ArraySlice<UInt8>) throws(TransportError) {
        try write(type, header, body, waits: false)
    }

    private func write(_ packet: HCIPacket, waits: Bool) throws(TransportError) {
        try write(packet.type, UnsafeRawBufferPointer(start: nil, count: 0), packet.bytes[...], waits: waits)
    }

    /// Writes the H4 frame: the type octet, `header`, `body`.
    private func write(_ type: HCIPacketType, _ header: UnsafeRawBufferPointer, _ body: ArraySlice<UInt8>, waits: Bool) throws(TransportError) {
        let count = 1 + header.count + body.count
        let result: Result<Void, TransportError> = withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { frame in
            frame[0] = type.rawValue
            UnsafeMutableRawBufferPointer(rebasing: frame[1...]).copyMemory(from: header)
            body.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: frame[(1 + header.count)...]).copyMemory(from: $0) }
            do throws(TransportError) {
                try loop.write(UnsafeRawBufferPointer(frame), timeout: sendTimeout, waits: waits)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    public func close() { loop.close() }

    /// One warning per read that dropped frames (a read may drop several at once), with the
    /// running counts.
    private func logDroppedFrames(_ statistics: H4Framer.Statistics) {
        logger.droppedInput(
            "frames from the controller dropped", counter: "droppedFrames", count: statistics.droppedFrames,
            metadata: ["transport": "\(name)", "skippedBytes": "\(statistics.skippedBytes)"])
    }
}

/// The framer's mutable state, touched only by the one reader thread that owns it.
private final class FramerBox: @unchecked Sendable {
    var framer: H4Framer
    init(_ framer: H4Framer) { self.framer = framer }
}
