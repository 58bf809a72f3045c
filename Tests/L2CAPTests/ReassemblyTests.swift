import BluetoothCore
import HCI
@testable import L2CAP
import Testing
import TestSupport

private func start(_ data: [UInt8], handle: UInt16 = 0x40) -> ACLDataPacket {
    ACLDataPacket(connectionHandle: handle, packetBoundary: .firstFlushable, data: data)
}

private func more(_ data: [UInt8], handle: UInt16 = 0x40) -> ACLDataPacket {
    ACLDataPacket(connectionHandle: handle, packetBoundary: .continuing, data: data)
}

private func frame(_ cid: ChannelIdentifier, _ payload: [UInt8]) -> [UInt8] {
    BasicFrame(channelID: cid, payload: payload).encode()
}

@Suite struct ACLReassemblerTests {
    var reassembler = ACLReassembler(maximumPayload: ChannelManager.Configuration.defaultMaximumReceivePayload)

    @Test mutating func wholeAndFragmentedPDUsArrive() {
        let whole = reassembler.receive(start(frame(.attributeProtocol, [1, 2, 3])))
        #expect(whole.frame == BasicFrame(channelID: .attributeProtocol, payload: [1, 2, 3]))
        #expect(whole.dropped.isEmpty)

        let bytes = frame(.attributeProtocol, Array(0..<60))
        #expect(reassembler.receive(start(Array(bytes[0..<27]))).frame == nil)
        #expect(reassembler.isReassembling)
        #expect(reassembler.receive(more(Array(bytes[27..<54]))).frame == nil)
        let last = reassembler.receive(more(Array(bytes[54...])))
        #expect(last.frame == BasicFrame(channelID: .attributeProtocol, payload: Array(0..<60)))
        #expect(!reassembler.isReassembling)
    }

    @Test mutating func aHeaderSplitAcrossFragmentsIsLegal() {
        let bytes = frame(.securityManagerProtocol, [9, 8, 7, 6])
        // One byte, then two, then the rest: the header is complete only in the third.
        #expect(reassembler.receive(start([bytes[0]])) == (nil, []))
        #expect(reassembler.receive(more(Array(bytes[1..<3]))) == (nil, []))
        let result = reassembler.receive(more(Array(bytes[3...])))
        #expect(result.frame == BasicFrame(channelID: .securityManagerProtocol, payload: [9, 8, 7, 6]))
        // An empty start fragment is only a header of zero bytes so far.
        #expect(reassembler.receive(start([])) == (nil, []))
        #expect(reassembler.receive(more(frame(.attributeProtocol, [5]))).frame == BasicFrame(channelID: .attributeProtocol, payload: [5]))
        // Zero-length payloads are valid B-frames.
        #expect(reassembler.receive(start(frame(.attributeProtocol, []))).frame == BasicFrame(channelID: .attributeProtocol, payload: []))
    }

    @Test mutating func startNonFlushableIsAcceptedToo() {
        let packet = ACLDataPacket(connectionHandle: 1, packetBoundary: .firstNonFlushable, data: frame(.attributeProtocol, [1]))
        #expect(reassembler.receive(packet).frame == BasicFrame(channelID: .attributeProtocol, payload: [1]))
    }

    /// Each malformed shape is dropped with its reason, and the next good PDU still arrives.
    @Test(arguments: MalformedShape.allCases)
    func malformedShapesAreDroppedAndTheNextPDUArrives(shape: MalformedShape) {
        var reassembler = ACLReassembler(maximumPayload: ChannelManager.Configuration.defaultMaximumReceivePayload)
        var dropped: [ACLReassembler.Drop] = []
        for packet in shape.packets {
            let result = reassembler.receive(packet)
            #expect(result.frame == nil)
            dropped += result.dropped
        }
        #expect(dropped == shape.expected)
        #expect(reassembler.bufferedCapacity <= 600)
        let good = reassembler.receive(start(frame(.attributeProtocol, [0x0A, 0x01, 0x00])))
        #expect(good.frame == BasicFrame(channelID: .attributeProtocol, payload: [0x0A, 0x01, 0x00]))
        #expect(good.dropped == shape.droppedByNextStart)
    }

    @Test mutating func anInterruptingStartIsItselfReassembled() {
        _ = reassembler.receive(start(Array(frame(.attributeProtocol, Array(0..<40))[0..<20])))
        let result = reassembler.receive(start(frame(.securityManagerProtocol, [1])))
        #expect(result.dropped == [.interruptedPDU])
        #expect(result.frame == BasicFrame(channelID: .securityManagerProtocol, payload: [1]))
    }

    @Test mutating func theChannelMaximumIsConfigurable() {
        reassembler.maximumPayload[.attributeProtocol] = 23
        #expect(reassembler.receive(start(frame(.attributeProtocol, Array(repeating: 0, count: 23)))).frame != nil)
        let result = reassembler.receive(start(frame(.attributeProtocol, Array(repeating: 0, count: 24))))
        #expect(result.dropped == [.exceedsChannelMaximum(.attributeProtocol, announced: 24, maximum: 23, payloadPrefix: [0, 0])])
    }
}

/// The malformed fragment sequences the reassembler must survive.
enum MalformedShape: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case continuationWithoutStart
    case startBeforePreviousFinished
    case fragmentOvershootsAnnouncedLength
    case startOvershootsAnnouncedLength
    case startAnnouncesMoreThanATTMaximum
    case startAnnouncesMoreThanSMPMaximum
    case startAnnouncesMoreThanSignalingMaximum
    case completeFlagOnLE
    case broadcastFlagOnLE
    case unsupportedChannel
    case splitHeaderThenOvershoot

    var testDescription: String { rawValue }

    var packets: [ACLDataPacket] {
        switch self {
        case .continuationWithoutStart:
            return [more([1, 2, 3])]
        case .startBeforePreviousFinished:
            return [start(Array(frame(.attributeProtocol, Array(0..<40))[0..<27]))]
        case .fragmentOvershootsAnnouncedLength:
            let bytes = frame(.attributeProtocol, Array(0..<30))
            return [start(Array(bytes[0..<27])), more(Array(bytes[27...]) + [0xEE])]
        case .startOvershootsAnnouncedLength:
            return [start(frame(.attributeProtocol, [1, 2]) + [3])]
        case .startAnnouncesMoreThanATTMaximum:
            // 518 announced, ATT allows 517; the continuations are consumed, not orphans.
            let bytes = frame(.attributeProtocol, Array(repeating: 0xAB, count: 518))
            return stride(from: 0, to: bytes.count, by: 251).map { offset in
                let chunk = Array(bytes[offset..<min(bytes.count, offset + 251)])
                return offset == 0 ? start(chunk) : more(chunk)
            }
        case .startAnnouncesMoreThanSMPMaximum:
            return [start([0xFF, 0xFF, 0x06, 0x00, 0x0C])]
        case .startAnnouncesMoreThanSignalingMaximum:
            return [start([24, 0x00, 0x05, 0x00, 0x12, 0x01])]
        case .completeFlagOnLE:
            return [ACLDataPacket(connectionHandle: 0x40, packetBoundary: .complete, data: frame(.attributeProtocol, [1]))]
        case .broadcastFlagOnLE:
            return [ACLDataPacket(connectionHandle: 0x40, packetBoundary: .firstFlushable, broadcast: .brEdrBroadcast, data: frame(.attributeProtocol, [1]))]
        case .unsupportedChannel:
            return [start(frame(ChannelIdentifier(0x0040), [1, 2])), start([10, 0, 0x41, 0]), more(Array(repeating: 0, count: 10))]
        case .splitHeaderThenOvershoot:
            return [start([0x02]), more([0x00, 0x04, 0x00, 1, 2, 3])]
        }
    }

    var expected: [ACLReassembler.Drop] {
        switch self {
        case .continuationWithoutStart: [.unexpectedContinuation]
        case .startBeforePreviousFinished: []
        case .fragmentOvershootsAnnouncedLength, .startOvershootsAnnouncedLength, .splitHeaderThenOvershoot: [.overlongPDU]
        case .startAnnouncesMoreThanATTMaximum:
            [.exceedsChannelMaximum(.attributeProtocol, announced: 518, maximum: 517, payloadPrefix: [0xAB, 0xAB])]
        case .startAnnouncesMoreThanSMPMaximum:
            [.exceedsChannelMaximum(.securityManagerProtocol, announced: 0xFFFF, maximum: 65, payloadPrefix: [0x0C])]
        case .startAnnouncesMoreThanSignalingMaximum:
            [.exceedsChannelMaximum(.leSignaling, announced: 24, maximum: 23, payloadPrefix: [0x12, 0x01])]
        case .completeFlagOnLE: [.completePacketBoundary]
        case .broadcastFlagOnLE: [.broadcastFlag]
        case .unsupportedChannel: [.unsupportedChannel(ChannelIdentifier(0x0040)), .unsupportedChannel(ChannelIdentifier(0x0041))]
        }
    }

    /// The good PDU that follows reports the unfinished one it interrupts.
    var droppedByNextStart: [ACLReassembler.Drop] {
        self == .startBeforePreviousFinished ? [.interruptedPDU] : []
    }
}

@Suite struct ReassemblyFuzzTests {
    /// 100,000 random fragments, biased towards plausible headers so the length checks are
    /// reached: nothing traps and storage never exceeds the largest channel maximum.
    @Test func randomFragmentsNeverTrapNorGrowPastTheBound() async {
        await cpuBound {
            var random = SeededRandom(seed: 0x12CA_9)
            var reassembler = ACLReassembler(maximumPayload: ChannelManager.Configuration.defaultMaximumReceivePayload)
            var frames = 0
            var largestBuffer = 0
            let channels: [UInt16] = [4, 5, 6, 0x40, UInt16.random(in: 0...0xFFFF, using: &random)]
            for iteration in 0..<100_000 {
                await yieldPeriodically(iteration: iteration)
                var data = random.bytes(lengths: 0...300)
                if data.count >= 4, Bool.random(using: &random) {
                    let length = UInt16.random(in: 0...600, using: &random)
                    data[0] = UInt8(length & 0xFF)
                    data[1] = UInt8(length >> 8)
                    let channel = channels.randomElement(using: &random) ?? 4
                    data[2] = UInt8(channel & 0xFF)
                    data[3] = UInt8(channel >> 8)
                }
                let boundary = ACLDataPacket.PacketBoundary.allCases.randomElement(using: &random) ?? .continuing
                let broadcast: ACLDataPacket.BroadcastFlag = Int.random(in: 0..<20, using: &random) == 0 ? .brEdrBroadcast : .pointToPoint
                let result = reassembler.receive(ACLDataPacket(connectionHandle: 1, packetBoundary: boundary, broadcast: broadcast, data: data))
                if let frame = result.frame {
                    frames += 1
                    #expect(frame.payload.count <= 517)
                }
                largestBuffer = max(largestBuffer, reassembler.bufferedCapacity)
            }
            #expect(frames > 0)
            // reserveCapacity may round up to the allocator's size class, never to the peer's
            // announced 64 KiB.
            #expect(largestBuffer <= 1024)
        }
    }
}
