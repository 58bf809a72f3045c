import BluetoothCore
import HCITransport
import SMP
import Testing
import TestSupport
import Trace

/// `--address` with resolvable private addresses: the specification's ah sample, then a
/// scripted trace whose peer hands its IRK over SMP.
@Suite struct AddressFilterTests {
    /// Core 5.4 Vol 3 Part H D.7: ah(ec0234a3..., 708194) = 0dfbaa, so 70:81:94:0D:FB:AA
    /// is an RPA of that IRK.
    static let irk = SMPValue128(hex: "ec0234a3 57c8ad05 341010a6 0a397d9b")!
    static let sampleRPA = BluetoothAddress("70:81:94:0D:FB:AA")!
    static let identity = BluetoothAddress("C4:4B:4D:00:00:09")!

    @Test func theSpecificationsSampleResolves() {
        /// Which of `candidates` the filter takes as the device (its cache is mutated).
        func devices(_ filter: AddressFilter, _ candidates: [BluetoothAddress]) -> [Bool] {
            var filter = filter
            return candidates.map { filter.isDevice($0) }
        }
        let withKey = AddressFilter(address: Self.identity, keys: [Self.irk])
        // The sample and the identity; one bit off in the hash, or in prand: another device.
        #expect(devices(withKey, [Self.sampleRPA, Self.identity, BluetoothAddress("70:81:94:0D:FB:AB")!, BluetoothAddress("70:81:95:0D:FB:AA")!])
            == [true, true, false, false])
        // Without the IRK, only the address itself.
        #expect(devices(AddressFilter(address: Self.identity), [Self.sampleRPA, Self.identity]) == [false, true])
        // Named by one of its RPAs, a known identity whose IRK resolves it is the device:
        // its identity address and its other RPAs match.
        var other = SeededRandom(seed: 7)
        let another = BluetoothAddress.resolvablePrivate(irk: Self.irk, using: &other)
        let byRPA = AddressFilter(address: Self.sampleRPA, known: [ExchangedIdentity(irk: Self.irk, address: Self.identity)])
        #expect(devices(byRPA, [Self.identity, another]) == [true, true])
        // A known identity of someone else adds nothing.
        let unrelated = AddressFilter(address: Self.identity, known: [ExchangedIdentity(irk: SMPValue128(1), address: BluetoothAddress(0xC0_0000_0000_01))])
        #expect(devices(unrelated, [Self.sampleRPA]) == [false] && unrelated.keys.isEmpty)
    }

    static func acl(_ handle: UInt16, cid: UInt16, _ payload: [UInt8], _ direction: PacketDirection) -> (HCIPacket, PacketDirection) {
        let frame = [UInt8(payload.count), 0, UInt8(cid), 0] + payload
        return (HCIPacket(.acl, [UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(frame.count), 0] + frame), direction)
    }

    static func connected(_ handle: UInt16, peer: BluetoothAddress) -> (HCIPacket, PacketDirection) {
        let parameters: [UInt8] = [0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01] + peer.littleEndianBytes + [0x18, 0, 0, 0, 0x48, 0, 0]
        return (HCIPacket(.event, [0x3E, UInt8(parameters.count)] + parameters), .controllerToHost)
    }

    static func disconnected(_ handle: UInt16) -> (HCIPacket, PacketDirection) {
        (HCIPacket(.event, [0x05, 0x04, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x13]), .controllerToHost)
    }

    static func advertised(_ address: BluetoothAddress) -> (HCIPacket, PacketDirection) {
        let parameters: [UInt8] = [0x02, 0x01, 0x00, 0x01] + address.littleEndianBytes + [0x00, 0xC4]
        return (HCIPacket(.event, [0x3E, UInt8(parameters.count)] + parameters), .controllerToHost)
    }

    /// A peer connects from the sample RPA, reads, hands over its IRK and identity during
    /// pairing, disconnects; later it advertises and connects from a fresh RPA. Asked for
    /// its identity with no IRK given, the filter learns the key from the trace: the
    /// packets from the exchange on are the device's, those before it are not (one
    /// forward pass), nor is another advertiser.
    @Test func anIRKExchangedInTheTraceResolvesLaterAddresses() {
        var generator = SeededRandom(seed: 42)
        let laterRPA = BluetoothAddress.resolvablePrivate(irk: Self.irk, using: &generator)
        let stranger = BluetoothAddress("7A:00:00:00:00:01")!
        let records: [(HCIPacket, PacketDirection)] = [
            Self.advertised(Self.sampleRPA),                                                         // 1: before the key
            Self.connected(0x0040, peer: Self.sampleRPA),                                            // 2
            Self.acl(0x0040, cid: 4, [0x0A, 0x03, 0x00], .hostToController),                         // 3
            Self.acl(0x0040, cid: 6, [0x08] + Self.irk.littleEndianBytes, .controllerToHost),         // 4: IRK
            Self.acl(0x0040, cid: 6, [0x09, 0x01] + Self.identity.littleEndianBytes, .controllerToHost), // 5: identity
            Self.acl(0x0040, cid: 4, [0x0A, 0x05, 0x00], .hostToController),                         // 6
            Self.disconnected(0x0040),                                                               // 7
            Self.advertised(stranger),                                                               // 8
            Self.advertised(laterRPA),                                                               // 9
            Self.connected(0x0041, peer: laterRPA),                                                  // 10
            Self.acl(0x0041, cid: 4, [0x0A, 0x03, 0x00], .hostToController),                         // 11
            Self.disconnected(0x0041),                                                               // 12
        ]
        var decoder = TraceDecoder(showKeys: false, withFields: false)
        var filter = AddressFilter(address: Self.identity)
        var matched: [Int] = []
        for (number, (packet, direction)) in records.enumerated() {
            let opcode: MonitorRecord.Opcode = switch (packet.type, direction) {
            case (.event, _): .eventPacket
            case (.acl, .hostToController): .aclTransmit
            default: .aclReceive
            }
            let decoded = decoder.decode(CaptureRecord(number: number + 1, index: 0, opcode: opcode, timestamp: Int64(number), payload: packet.bytes))
            if filter.matches(decoded) { matched.append(number + 1) }
        }
        #expect(matched == [5, 6, 7, 9, 10, 11, 12])
        #expect(filter.identities == [Self.identity] && filter.keys == [Self.irk])
    }

    /// The IRK waits per connection side for its Identity Address Information; sides that
    /// never send one are bounded like the decoder's other per-side state.
    @Test func keysWaitingForAnIdentityAreBounded() {
        var decoder = TraceDecoder(withFields: false)
        for handle in 0..<UInt16(2_000) {
            let (packet, _) = Self.acl(handle, cid: 6, [0x08] + SMPValue128(UInt128(handle)).littleEndianBytes, .controllerToHost)
            _ = decoder.decode(CaptureRecord(number: Int(handle) + 1, index: 0, opcode: .aclReceive, timestamp: 0, payload: packet.bytes))
        }
        #expect(decoder.trackedSides <= 2 * TraceDecoder.maximumConnections, "\(decoder.trackedSides) sides held")
    }

    /// A trace may claim any number of IRKs for the device: learnt ones are bounded (the
    /// oldest learnt dropped and counted), and the user's own `--irk` is never the one dropped.
    @Test func learntKeysAreBoundedAndGivenOnesKept() {
        var filter = AddressFilter(address: Self.identity, keys: [Self.irk])
        for n in 1...UInt128(1_000) {
            filter.learn(ExchangedIdentity(irk: SMPValue128(n), address: Self.identity))
        }
        #expect(filter.keys.count == 1 + AddressFilter.maximumKeys)
        #expect(filter.forgottenKeys == 1_000 - AddressFilter.maximumKeys)
        #expect(filter.keys.first == Self.irk)
        let resolved = filter.isDevice(Self.sampleRPA)
        #expect(resolved)
    }
}
