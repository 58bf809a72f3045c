import BluetoothCore

/// Cuts an H4 byte stream (UART, pty, TCP) into HCI packets.
///
/// Feed it chunks exactly as they came off the descriptor; it hands out every complete
/// packet in order. An H4 stream has no checksum and no delimiter, so one lost or extra
/// byte would shift every later packet. The framer therefore never trusts the stream
/// blindly:
///
/// - a byte that is not an accepted packet indicator is skipped;
/// - a header that no controller would send (event code 0x00, a reserved connection
///   handle, an ACL length above ``Configuration/maxACLLength``, a Command Complete shorter
///   than its fixed fields, ...) drops one byte and the search goes on at the next byte;
/// - a complete frame that is not followed by a plausible frame start (allowing one stray
///   byte, after which a complete, well-followed frame must come) *and* that hides such a
///   frame inside itself is taken to be misaligned: it swallowed the start of real
///   packets. It is dropped one byte at a time and rescanned, so they come back out. A
///   frame that hides none is taken as real, followed by stray bytes. The check only looks
///   at bytes already received: a frame at the end of a chunk is delivered at once,
///   because holding it for the next chunk would add latency to every scan report;
/// - a partial frame with no new byte for ``Configuration/stallGap`` is rescanned from its
///   second byte (recovering complete packets it swallowed) and the rest is discarded. Only
///   a stream that can lose bytes needs this (a UART overrun, a controller reset mid-frame);
///   over TCP or a socketpair a gap is a slow or descheduled sender, and abandoning its
///   packet would throw away a report that was on its way (``Configuration/reliable``).
///
/// Time is passed in (monotonic nanoseconds) so tests are deterministic.
///
/// Cost: a frame that arrives whole inside one chunk is copied once, straight from the
/// chunk into its ``HCIPacket``; only a frame split across chunks passes through a small
/// reassembly buffer.
public struct H4Framer: Sendable {
    /// What the framer accepts and how long it waits for the rest of a packet.
    public struct Configuration: Sendable, Hashable {
        /// Packet indicators accepted; any other indicator byte is skipped.
        public var acceptedTypes: Set<HCIPacketType>
        /// ACL frames announcing more data than this are treated as misaligned. The largest
        /// ACL buffer a controller reports is 1021 bytes on common chips; Bumble's software
        /// controller sends whole L2CAP PDUs (up to ATT MTU 517 plus headers).
        public var maxACLLength: Int
        /// ISO frames announcing more than this are treated as misaligned.
        public var maxISOLength: Int
        /// A partial packet with no new byte for this long is abandoned; nil waits for the
        /// rest however long it takes (a stream that loses no byte, see ``reliable``).
        public var stallGap: Duration?

        public init(
            acceptedTypes: Set<HCIPacketType> = [.event, .acl, .sco, .iso],
            maxACLLength: Int = 1024,
            maxISOLength: Int = 4095,
            stallGap: Duration? = .milliseconds(100)
        ) {
            self.acceptedTypes = acceptedTypes
            self.maxACLLength = maxACLLength
            self.maxISOLength = maxISOLength
            self.stallGap = stallGap
        }

        /// What a host reads from a controller: events, ACL, SCO, ISO.
        public static let controllerToHost = Configuration()
        /// Every packet type, commands included (a fake controller in tests reads these).
        public static let anyDirection = Configuration(acceptedTypes: Set(HCIPacketType.allCases))

        /// The same, for a stream that never loses or reorders a byte (TCP, a socketpair):
        /// no stall gap. Misaligned headers are still caught; a partial packet is only ever
        /// completed, since its sender may simply be slow (a loaded machine, a TCP
        /// retransmission) and the packet costs at most one frame of memory meanwhile.
        public var reliable: Configuration {
            var configuration = self
            configuration.stallGap = nil
            return configuration
        }
    }

    /// How much the framer had to throw away to stay aligned.
    public struct Statistics: Sendable, Hashable {
        /// Packets delivered.
        public var packets = 0
        /// Bytes discarded: invalid indicators, bytes dropped while resynchronising, the
        /// tails of stalled partial packets.
        public var skippedBytes = 0
        /// Candidate frames abandoned: implausible headers, misaligned frames, stalls.
        public var droppedFrames = 0
        /// Times a partial packet stalled for longer than the gap.
        public var stalls = 0

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var statistics = Statistics()

    private let acceptedMask: UInt8
    private let stallGapNanoseconds: UInt64?
    /// The start of a frame split across chunks, indicator first.
    private var pending: [UInt8] = []
    private var lastByteTime: UInt64 = 0

    public init(configuration: Configuration = .controllerToHost) {
        self.configuration = configuration
        var mask: UInt8 = 0
        for type in configuration.acceptedTypes { mask |= 1 << type.rawValue }
        acceptedMask = mask
        stallGapNanoseconds = configuration.stallGap.map(MonotonicClock.nanoseconds(in:))
        pending.reserveCapacity(64)
    }

    /// True while part of a packet is buffered; the reader then waits at most until
    /// ``stallDeadline`` before calling ``expire(now:deliver:)``.
    public var isMidPacket: Bool { !pending.isEmpty }

    /// When the buffered partial packet counts as stalled (monotonic nanoseconds), or nil
    /// (nothing buffered, or no stall gap).
    public var stallDeadline: UInt64? {
        guard !pending.isEmpty, let stallGapNanoseconds else { return nil }
        return lastByteTime &+ stallGapNanoseconds
    }

    /// Feeds bytes received at `now` (monotonic nanoseconds).
    public mutating func feed(_ bytes: [UInt8], now: UInt64 = 0, deliver: (HCIPacket) -> Void) {
        bytes.withUnsafeBufferPointer { feed($0, now: now, deliver: deliver) }
    }

    /// Feeds bytes received at `now` (monotonic nanoseconds).
    public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, now: UInt64, deliver: (HCIPacket) -> Void) {
        guard !chunk.isEmpty else { return }
        expire(now: now, deliver: deliver)
        lastByteTime = now
        var index = 0
        while !pending.isEmpty {
            let inspection = pending.withUnsafeBufferPointer { Self.inspect($0, at: 0, acceptedMask, configuration) }
            let needed: Int
            switch inspection {
            case .invalid:
                statistics.droppedFrames += 1
                replayPending(deliver: deliver)
                continue
            case let .needHeader(total):
                needed = total - pending.count
            case let .frame(total):
                needed = total - pending.count
                if needed == 0 {
                    let rest = UnsafeBufferPointer(rebasing: chunk[index...])
                    let misaligned = !confirms(rest, at: 0)
                        && pending.withUnsafeBufferPointer { Self.hidesFrame($0, from: 1, to: $0.count, acceptedMask, configuration) }
                    if !misaligned {
                        let type = HCIPacketType(rawValue: pending[0]) ?? .event
                        deliver(HCIPacket(type, Array(pending[1...])))
                        statistics.packets += 1
                        pending.removeAll(keepingCapacity: true)
                    } else {
                        statistics.droppedFrames += 1
                        replayPending(deliver: deliver)
                    }
                    continue
                }
            }
            if index == chunk.count { break }
            let take = min(needed, chunk.count - index)
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[index..<(index + take)]))
            index += take
        }
        if pending.isEmpty, index < chunk.count {
            let rest = UnsafeBufferPointer(rebasing: chunk[index...])
            let consumed = scan(rest, deliver: deliver)
            if consumed < rest.count {
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: rest[consumed...]))
            }
        }
    }

    /// Abandons a partial packet that has seen no byte for the stall gap: its bytes are
    /// rescanned from the second one, so complete packets it had swallowed are delivered,
    /// and whatever is still incomplete is discarded.
    public mutating func expire(now: UInt64, deliver: (HCIPacket) -> Void) {
        guard let deadline = stallDeadline, now >= deadline else { return }
        statistics.stalls += 1
        statistics.droppedFrames += 1
        while !pending.isEmpty { replayPending(deliver: deliver) }
    }

    /// Decodes one whole H4 frame, as a Linux HCI socket returns it from one read():
    /// indicator byte, header, exactly the announced payload.
    public static func decodeFrame(_ frame: UnsafeBufferPointer<UInt8>) throws(DecodeError) -> HCIPacket {
        guard let first = frame.first else { throw .truncated(needed: 1, available: 0) }
        guard let type = HCIPacketType(rawValue: first) else {
            throw .invalidValue(field: "H4 packet indicator", value: Int(first))
        }
        let headerLength = Self.headerLength(type)
        guard frame.count >= 1 + headerLength else {
            throw .truncated(needed: 1 + headerLength, available: frame.count)
        }
        let payload = Self.payloadLength(type, frame, headerAt: 1)
        guard frame.count == 1 + headerLength + payload else {
            throw .lengthMismatch(declared: payload, actual: frame.count - 1 - headerLength)
        }
        return HCIPacket(type, Array(UnsafeBufferPointer(rebasing: frame[1...])))
    }

    /// Decodes one whole H4 frame held in an array.
    public static func decodeFrame(_ frame: [UInt8]) throws(DecodeError) -> HCIPacket {
        let result: Result<HCIPacket, DecodeError> = frame.withUnsafeBufferPointer { buffer in
            do throws(DecodeError) { return .success(try decodeFrame(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    // MARK: - Scanning

    /// Delivers every complete, plausible frame in `buffer`; returns how many bytes were
    /// consumed. The unconsumed tail is the start of a frame that needs more bytes.
    private mutating func scan(_ buffer: UnsafeBufferPointer<UInt8>, deliver: (HCIPacket) -> Void) -> Int {
        var index = 0
        while index < buffer.count {
            switch Self.inspect(buffer, at: index, acceptedMask, configuration) {
            case .invalid:
                if acceptedMask & Self.bit(buffer[index]) != 0 { statistics.droppedFrames += 1 }
                statistics.skippedBytes += 1
                index += 1
            case .needHeader:
                return index
            case let .frame(total):
                let end = index + total
                guard end <= buffer.count else { return index }
                if !confirms(buffer, at: end),
                    Self.hidesFrame(buffer, from: index + 1, to: end, acceptedMask, configuration)
                {
                    statistics.droppedFrames += 1
                    statistics.skippedBytes += 1
                    index += 1
                    continue
                }
                let type = HCIPacketType(rawValue: buffer[index]) ?? .event
                deliver(HCIPacket(type, Array(UnsafeBufferPointer(rebasing: buffer[(index + 1)..<end]))))
                statistics.packets += 1
                index = end
            }
        }
        return index
    }

    /// Drops the first buffered byte and rescans the rest.
    private mutating func replayPending(deliver: (HCIPacket) -> Void) {
        let old = pending
        pending = []
        pending.reserveCapacity(64)
        statistics.skippedBytes += 1
        old.withUnsafeBufferPointer { buffer in
            let rest = UnsafeBufferPointer(rebasing: buffer[1...])
            let consumed = scan(rest, deliver: deliver)
            if consumed < rest.count {
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: rest[consumed...]))
            }
        }
    }

    /// Whether a frame ending at `end` is followed by something that can start a frame.
    /// Bytes not received yet count as a yes. One stray byte is tolerated, but the frame
    /// after it must then be complete and itself followed by a plausible start: length
    /// bytes are often small numbers that look like indicators, so a lone plausible
    /// header after a skipped byte proves little.
    private func confirms(_ buffer: UnsafeBufferPointer<UInt8>, at end: Int) -> Bool {
        guard end < buffer.count else { return true }
        if case .invalid = Self.inspect(buffer, at: end, acceptedMask, configuration) {
            return Self.completeFrameFollowed(buffer, at: end + 1, acceptedMask, configuration)
        }
        return true
    }

    /// Whether a complete frame starts at `position` and is directly followed by a
    /// plausible frame start or by the end of the bytes received.
    private static func completeFrameFollowed(
        _ buffer: UnsafeBufferPointer<UInt8>, at position: Int, _ acceptedMask: UInt8, _ configuration: Configuration
    ) -> Bool {
        guard position < buffer.count, acceptedMask & bit(buffer[position]) != 0,
            case let .frame(total) = inspect(buffer, at: position, acceptedMask, configuration)
        else { return false }
        let end = position + total
        guard end <= buffer.count else { return false }
        if end == buffer.count { return true }
        if case .invalid = inspect(buffer, at: end, acceptedMask, configuration) { return false }
        return true
    }

    /// Whether a complete frame starts somewhere in `lower..<upper` and is directly
    /// followed by a plausible frame start (or by the end of the bytes received). A frame
    /// that failed ``confirms(_:at:)`` and hides one is misaligned (it swallowed the start
    /// of real packets); one that hides none is taken as real, followed by stray bytes.
    private static func hidesFrame(
        _ buffer: UnsafeBufferPointer<UInt8>, from lower: Int, to upper: Int, _ acceptedMask: UInt8,
        _ configuration: Configuration
    ) -> Bool {
        var position = lower
        while position < upper {
            if completeFrameFollowed(buffer, at: position, acceptedMask, configuration) { return true }
            position += 1
        }
        return false
    }

    private enum Inspection {
        /// Not a frame start here.
        case invalid
        /// Plausible so far; `total` bytes make up indicator plus header.
        case needHeader(total: Int)
        /// A plausible header announcing a frame of `total` bytes, indicator included.
        case frame(total: Int)
    }

    @inline(__always)
    private static func bit(_ byte: UInt8) -> UInt8 { byte < 8 ? 1 << byte : 0 }

    /// Header bytes after the indicator (Core Vol 4 Part E 5.4).
    @inline(__always)
    private static func headerLength(_ type: HCIPacketType) -> Int {
        switch type {
        case .command, .sco: 3
        case .acl, .iso: 4
        case .event: 2
        }
    }

    @inline(__always)
    private static func payloadLength(_ type: HCIPacketType, _ buffer: UnsafeBufferPointer<UInt8>, headerAt h: Int) -> Int {
        switch type {
        case .command, .sco: Int(buffer[h + 2])
        case .event: Int(buffer[h + 1])
        case .acl: Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8
        case .iso: (Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8) & 0x3FFF
        }
    }

    /// Connection handles above 0x0EFF are reserved (Core Vol 4 Part E 5.4.2).
    private static let maxConnectionHandle = 0x0EFF

    private static func inspect(
        _ buffer: UnsafeBufferPointer<UInt8>, at index: Int, _ acceptedMask: UInt8, _ configuration: Configuration
    ) -> Inspection {
        let indicator = buffer[index]
        guard acceptedMask & bit(indicator) != 0, let type = HCIPacketType(rawValue: indicator) else { return .invalid }
        let headerEnd = index + 1 + headerLength(type)
        guard headerEnd <= buffer.count else { return .needHeader(total: 1 + headerLength(type)) }
        let h = index + 1
        let field = Int(buffer[h]) | Int(buffer[h + 1]) << 8
        let payload = payloadLength(type, buffer, headerAt: h)
        switch type {
        case .command:
            // OGF 0x01...0x08 are the specified groups, 0x3F is vendor-specific.
            let groupField = field >> 10
            guard (0x01...0x08).contains(groupField) || groupField == 0x3F else { return .invalid }
        case .acl:
            // Broadcast flag 0b11 is reserved.
            guard field & 0x0FFF <= maxConnectionHandle, field >> 14 != 0b11,
                payload <= configuration.maxACLLength
            else { return .invalid }
        case .sco:
            guard field & 0x0FFF <= maxConnectionHandle, field >> 14 == 0 else { return .invalid }
        case .iso:
            // Bit 15 of the handle field and bits 14-15 of the length field are RFU.
            let lengthField = Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8
            guard field & 0x0FFF <= maxConnectionHandle, field >> 15 == 0, lengthField >> 14 == 0,
                payload <= configuration.maxISOLength
            else { return .invalid }
        case .event:
            guard plausibleEvent(code: buffer[h], parameterLength: payload) else { return .invalid }
        }
        return .frame(total: 1 + headerLength(type) + payload)
    }

    /// Event codes defined up to Core 6.0 end well below 0x60; 0xFE and 0xFF are the
    /// debug and vendor codes. The fixed-size events that dominate a host's traffic also
    /// get their minimum lengths checked, which is what makes a misaligned header rare.
    private static func plausibleEvent(code: UInt8, parameterLength: Int) -> Bool {
        switch code {
        case 0x0E: parameterLength >= 3  // Command Complete: packets, opcode
        case 0x0F: parameterLength == 4  // Command Status
        case 0x13: parameterLength >= 1  // Number Of Completed Packets
        case 0x3E: parameterLength >= 1  // LE Meta: subevent code
        case 0x01...0x5F, 0xFE, 0xFF: true
        default: false
        }
    }
}
