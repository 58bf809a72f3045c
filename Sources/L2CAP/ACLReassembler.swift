import BluetoothCore
import HCI

/// Rebuilds B-frames from the ACL fragments of one connection (Core Vol 3 Part A 7.2,
/// Vol 4 Part E 5.4.2).
///
/// Peer bytes decide everything here, so every path is checked: a fragment that does not
/// fit the state is dropped and reported, the reassembler returns to a state where the next
/// well-formed PDU is accepted, and it never buffers more than the destination channel's
/// configured maximum (the buffer is reserved only after the announced length passed that
/// check).
public struct ACLReassembler: Sendable {
    /// Why a fragment, or the PDU it belonged to, was thrown away.
    public enum Drop: Sendable, Equatable {
        /// Broadcast_Flag other than point-to-point: LE has no broadcast ACL.
        case broadcastFlag
        /// Packet_Boundary_Flag 0b11 ("complete"): not allowed from an LE controller.
        case completePacketBoundary
        /// A continuation fragment with no PDU being reassembled.
        case unexpectedContinuation
        /// A start fragment arrived before the previous PDU was complete; the previous one
        /// is lost, the new one is reassembled.
        case interruptedPDU
        /// The header announces more payload than the channel's maximum; the PDU's
        /// fragments are consumed without being stored. `payloadPrefix` holds up to the
        /// first two payload bytes seen in the start fragment (for signaling: code and
        /// identifier, so the peer can be told its command was too long).
        case exceedsChannelMaximum(ChannelIdentifier, announced: Int, maximum: Int, payloadPrefix: [UInt8])
        /// The channel has no configured maximum: nothing on this link serves it.
        case unsupportedChannel(ChannelIdentifier)
        /// The fragments carried more bytes than the header announced.
        case overlongPDU
    }

    private enum State: Sendable {
        case idle
        /// A start fragment shorter than the basic header: the rest of the header follows
        /// in continuations (legal; at most three bytes are held).
        case header([UInt8])
        case collecting(ChannelIdentifier, expected: Int, buffer: [UInt8])
        /// Consuming a dropped PDU's continuations so they are not mistaken for orphans.
        case skipping(remaining: Int)
    }

    /// The largest payload accepted per channel; channels absent here are dropped, or held
    /// to ``otherChannels`` when it is set (a trace reassembles every channel).
    public var maximumPayload: [ChannelIdentifier: Int]
    public var otherChannels: Int?
    private var state = State.idle

    public init(maximumPayload: [ChannelIdentifier: Int], otherChannels: Int? = nil) {
        self.maximumPayload = maximumPayload
        self.otherChannels = otherChannels
    }

    /// True while a PDU is partly received (for diagnostics and tests).
    public var isReassembling: Bool {
        if case .idle = state { return false }
        return true
    }

    /// Bytes of storage held for the PDU in progress (tests check it stays under the bound).
    var bufferedCapacity: Int {
        switch state {
        case .idle, .skipping: 0
        case .header(let partial): partial.capacity
        case .collecting(_, _, let buffer): buffer.capacity
        }
    }

    /// Feeds one ACL packet for this connection. Returns a complete B-frame when this
    /// fragment finished one, and every drop it caused (at most two: an interrupted PDU and
    /// a problem with the new start).
    public mutating func receive(_ packet: ACLDataPacket) -> (frame: BasicFrame?, dropped: [Drop]) {
        guard packet.broadcast == .pointToPoint else { return (nil, [.broadcastFlag]) }
        switch packet.packetBoundary {
        case .complete:
            return (nil, [.completePacketBoundary])
        case .firstFlushable, .firstNonFlushable:
            var dropped: [Drop] = []
            switch state {
            case .header, .collecting: dropped.append(.interruptedPDU)
            case .idle, .skipping: break
            }
            state = .idle
            let (frame, drop) = start(packet.data[...])
            if let drop { dropped.append(drop) }
            return (frame, dropped)
        case .continuing:
            let (frame, drop) = continuation(packet.data)
            return (frame, drop.map { [$0] } ?? [])
        }
    }

    private mutating func start(_ data: ArraySlice<UInt8>) -> (BasicFrame?, Drop?) {
        guard data.count >= BasicFrameHeader.size else {
            state = .header(Array(data))
            return (nil, nil)
        }
        let base = data.startIndex
        let length = Int(data[base]) | Int(data[base + 1]) << 8
        let channel = ChannelIdentifier(rawValue: UInt16(data[base + 2]) | UInt16(data[base + 3]) << 8)
        let body = data[(base + BasicFrameHeader.size)...]
        guard body.count <= length else {
            state = .idle
            return (nil, .overlongPDU)
        }
        guard let maximum = maximumPayload[channel] ?? otherChannels else {
            skip(remaining: length - body.count)
            return (nil, .unsupportedChannel(channel))
        }
        guard length <= maximum else {
            skip(remaining: length - body.count)
            return (nil, .exceedsChannelMaximum(channel, announced: length, maximum: maximum, payloadPrefix: Array(body.prefix(2))))
        }
        if body.count == length {
            state = .idle
            return (BasicFrame(channelID: channel, payload: Array(body)), nil)
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(length)
        buffer.append(contentsOf: body)
        state = .collecting(channel, expected: length, buffer: buffer)
        return (nil, nil)
    }

    private mutating func skip(remaining: Int) {
        state = remaining > 0 ? .skipping(remaining: remaining) : .idle
    }

    private mutating func continuation(_ data: [UInt8]) -> (BasicFrame?, Drop?) {
        switch state {
        case .idle:
            return (nil, .unexpectedContinuation)
        case .header(let partial):
            // At most three held bytes plus one fragment the driver already holds: no
            // growth beyond what the peer has actually sent.
            state = .idle
            return start((partial + data)[...])
        case .skipping(let remaining):
            if data.count > remaining {
                state = .idle
                return (nil, .overlongPDU)
            }
            skip(remaining: remaining - data.count)
            return (nil, nil)
        case .collecting(let channel, let expected, var buffer):
            // Release the state's reference first so appending does not copy the buffer.
            state = .idle
            guard buffer.count + data.count <= expected else { return (nil, .overlongPDU) }
            buffer.append(contentsOf: data)
            if buffer.count == expected { return (BasicFrame(channelID: channel, payload: buffer), nil) }
            state = .collecting(channel, expected: expected, buffer: buffer)
            return (nil, nil)
        }
    }
}
