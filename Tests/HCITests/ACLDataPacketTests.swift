import BluetoothCore
import HCI
import Testing
import TestSupport

@Suite struct ACLDataPacketTests {
    @Test func decodesAnLEStartFragment() throws {
        // Handle 0x040, first automatically flushable, point-to-point; an L2CAP header
        // (length 3, CID 0x0004 ATT) and an ATT Exchange MTU Request.
        let bytes = Hex.bytes("40 20 07 00 03 00 04 00 02 F7 00")!
        let packet = try ACLDataPacket(decoding: bytes)
        #expect(packet.connectionHandle == 0x040)
        #expect(packet.packetBoundary == .firstFlushable)
        #expect(packet.broadcast == .pointToPoint)
        #expect(packet.data == [0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00])
        #expect(packet.encode() == bytes)
    }

    @Test func everyFlagCombinationRoundTrips() throws {
        var random = SeededRandom(seed: 0xAC1)
        for boundary in ACLDataPacket.PacketBoundary.allCases {
            for broadcast in ACLDataPacket.BroadcastFlag.allCases {
                let packet = ACLDataPacket(connectionHandle: random.handle(), packetBoundary: boundary, broadcast: broadcast, data: random.fastBytes(random.int(0...300)))
                let bytes = packet.encode()
                #expect(bytes[1] >> 4 == boundary.rawValue | broadcast.rawValue << 2)
                #expect(try ACLDataPacket(decoding: bytes) == packet)
            }
        }
    }

    @Test func handleIsTwelveBits() throws {
        let packet = ACLDataPacket(connectionHandle: 0xFEFF, packetBoundary: .continuing, data: [])
        #expect(packet.connectionHandle == 0x0EFF)
        #expect(packet.encode() == [0xFF, 0x1E, 0x00, 0x00])
        #expect(try ACLDataPacket(decoding: [0xFF, 0xFF, 0x00, 0x00]) == ACLDataPacket(connectionHandle: 0xFFF, packetBoundary: .complete, broadcast: .reserved0b11, data: []))
    }

    @Test func lengthMustMatchData() {
        #expect(throws: DecodeError.lengthMismatch(declared: 8, actual: 7)) {
            try ACLDataPacket(decoding: Hex.bytes("40 20 08 00 03 00 04 00 02 F7 00")!)
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 6, actual: 7)) {
            try ACLDataPacket(decoding: Hex.bytes("40 20 06 00 03 00 04 00 02 F7 00")!)
        }
        #expect(throws: DecodeError.lengthMismatch(declared: 0xFFFF, actual: 0)) {
            try ACLDataPacket(decoding: [0x40, 0x20, 0xFF, 0xFF])
        }
    }

    @Test func truncatedHeaderThrows() {
        #expect(throws: DecodeError.truncated(needed: 2, available: 0)) { try ACLDataPacket(decoding: []) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try ACLDataPacket(decoding: [0x40]) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 0)) { try ACLDataPacket(decoding: [0x40, 0x20]) }
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try ACLDataPacket(decoding: [0x40, 0x20, 0x01]) }
    }

    /// 100,000 seeded inputs: half fully random, half valid packets with a damaged length.
    @Test func randomInputNeverTraps() async {
        await cpuBound {
            var random = SeededRandom(seed: 0xAC1_F022)
            var failures: [String] = []
            var decoded = 0
            for index in 0..<100_000 {
                await yieldPeriodically(iteration: index)
                var bytes: [UInt8]
                if index.isMultiple(of: 2) {
                    bytes = random.fastBytes(random.int(0...80))
                } else {
                    bytes = ACLDataPacket(connectionHandle: random.word(), packetBoundary: .firstFlushable, data: random.fastBytes(random.int(0...80))).encode()
                    if random.int(0...1) == 0 { bytes[2] = random.byte() }
                }
                guard let packet = try? ACLDataPacket(decoding: bytes) else { continue }
                decoded += 1
                if (try? ACLDataPacket(decoding: packet.encode())) != packet, failures.count < 5 {
                    failures.append(Hex.string(bytes))
                }
            }
            #expect(failures.isEmpty, "\(failures)")
            #expect(decoded >= 20_000)
        }
    }
}
