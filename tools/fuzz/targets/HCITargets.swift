import HCI
import HCITransport

/// What a controller sends the host: an H4 byte stream, and the events in it.
enum HCITargets {
    /// The input is a byte stream from the controller, cut into reads at lengths the
    /// first byte chooses; every packet framed is decoded as the driver would.
    @Sendable static func h4Framer(_ bytes: [UInt8]) {
        guard let cut = bytes.first else { return }
        var framer = H4Framer()
        var framed = 0
        var now: UInt64 = 0
        var offset = 1
        while offset < bytes.count {
            let end = min(bytes.count, offset + Int(cut % 64) + 1)
            framer.feed(Array(bytes[offset..<end]), now: now) { packet in
                framed += 1
                if packet.type == .event { event(packet.bytes) }
                if packet.type == .acl { _ = try? ACLDataPacket(decoding: packet.bytes) }
            }
            offset = end
            now += 1_000_000
        }
        framer.expire(now: .max) { _ in framed += 1 }
        // Each framed packet took at least its 3-byte header from the input.
        expect(framed <= bytes.count / 3 + 1, "\(framed) packets from \(bytes.count) bytes")
    }

    /// One event packet (code, length, parameters): decodes or throws; what decodes
    /// re-encodes to an event that decodes to the same value.
    @Sendable static func event(_ bytes: [UInt8]) {
        guard let event = try? HCIEvent(decoding: bytes) else { return }
        expect(event.code == bytes[0], "decoded as code \(event.code)")
        if case .le(let meta) = event { expect(meta.subeventCode == bytes[2], "decoded as subevent \(meta.subeventCode)") }
        let again = try? HCIEvent(decoding: event.encode())
        expect(again == event, "round trip changed \(event)")
    }
}
