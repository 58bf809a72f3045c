import BluetoothCore

extension TraceScript {
    public static let examplePeer = BluetoothAddress(0xC4_4B_4D_00_00_07)
    public static let exampleAdvertiser = BluetoothAddress(0xC4_4B_4D_00_00_08)

    /// One connection (handle 0x0040, 20 ms) and one advertiser, with these figures by hand:
    /// sent 4 ACL packets, 32 bytes (MTU request 7, two reads 7 each, Pairing Request 11);
    /// received 7 packets, 58 bytes (MTU response 7, Read Response 7, Error Response 9,
    /// three notifications 8 each, Pairing Response 11); 3 transactions with round trips
    /// 500, 1,000 and 2,000 µs; 1 ATT error (Insufficient Authentication); 3 notifications
    /// (150/s); encryption on once; 1 pairing, completed; disconnected by the peer (0x13).
    /// The advertiser: 4 reports (3 ADV_IND 100 ms apart, 1 SCAN_RSP), RSSI -70 to -50.
    public static func statisticsExample() -> TraceScript {
        var script = TraceScript()
        script.connected(0x0040, peer: examplePeer)
        script.at(1_000)
        script.exchange([0x02, 0x00, 0x02], [0x03, 0x00, 0x02], rtt: 500)
        script.at(2_000)
        script.exchange([0x0A, 0x03, 0x00], [0x0B, 0x41, 0x42], rtt: 1_000)
        script.at(4_000)
        script.exchange([0x0A, 0x05, 0x00], [0x01, 0x0A, 0x05, 0x00, 0x05], rtt: 2_000)
        for at: Int64 in [7_000, 8_000, 9_000] {
            script.at(at)
            script.l2cap([0x1B, 0x03, 0x00, 0x01], sent: false)
        }
        script.at(10_000)
        script.l2cap([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], channel: 0x0006, sent: true)
        script.at(11_000)
        script.l2cap([0x02, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], channel: 0x0006, sent: false)
        script.at(12_000)
        script.encryptionChanged(0x0040)
        script.at(20_000)
        script.disconnected(0x0040)
        for (at, rssi, type): (Int64, Int8, UInt8) in [(100, -60, 0x00), (200, -55, 0x04), (100_100, -50, 0x00), (200_100, -70, 0x00)] {
            script.at(at)
            script.advertisingReport(exampleAdvertiser, rssi: rssi, eventType: type)
        }
        return script
    }

    /// The Device Name of ``discoveryExample(handle:peer:)``: 27 bytes, read in two (22 bytes
    /// fill a Read Response at the default ATT_MTU of 23, Read Blob gives the rest).
    public static let exampleName = Array("BareBLE trace example name!".utf8)

    /// A discovery as our client makes it, on a connection of its own: services 0x1800
    /// (0x0001-0x0005) and 0x180F (0x0006-0x000A); Device Name (declaration 0x0002, value
    /// 0x0003, read long) with a User Description at 0x0004 ("Name"); Battery Level
    /// (0x0007, value 0x0008, Read Notify; its read refused with Insufficient
    /// Authentication) with a CCCD at 0x0009 (read: 0000). No include, no Database Hash.
    public static func discoveryExample(into script: inout TraceScript, handle: UInt16 = 0x0040, peer: BluetoothAddress = examplePeer) {
        script.connected(handle, peer: peer)
        let notFound: (UInt8, UInt16) -> [UInt8] = { opcode, at in [0x01, opcode, UInt8(at & 0xFF), UInt8(at >> 8), 0x0A] }
        script.exchange([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28],
                        [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x0A, 0x00, 0x0F, 0x18], handle: handle)
        script.exchange([0x10, 0x0B, 0x00, 0xFF, 0xFF, 0x00, 0x28], notFound(0x10, 0x000B), handle: handle)
        script.exchange([0x08, 0x01, 0x00, 0x0A, 0x00, 0x02, 0x28], notFound(0x08, 0x0001), handle: handle)
        script.exchange([0x08, 0x01, 0x00, 0x0A, 0x00, 0x03, 0x28],
                        [0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A, 0x07, 0x00, 0x12, 0x08, 0x00, 0x19, 0x2A], handle: handle)
        script.exchange([0x08, 0x09, 0x00, 0x0A, 0x00, 0x03, 0x28], notFound(0x08, 0x0009), handle: handle)
        script.exchange([0x04, 0x04, 0x00, 0x05, 0x00], [0x05, 0x01, 0x04, 0x00, 0x01, 0x29], handle: handle)
        script.exchange([0x04, 0x05, 0x00, 0x05, 0x00], notFound(0x04, 0x0005), handle: handle)
        script.exchange([0x04, 0x09, 0x00, 0x0A, 0x00], [0x05, 0x01, 0x09, 0x00, 0x02, 0x29], handle: handle)
        script.exchange([0x04, 0x0A, 0x00, 0x0A, 0x00], notFound(0x04, 0x000A), handle: handle)
        script.exchange([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x2A, 0x2B], notFound(0x08, 0x0001), handle: handle)
        script.exchange([0x0A, 0x04, 0x00], [0x0B] + Array("Name".utf8), handle: handle)
        script.exchange([0x0A, 0x03, 0x00], [0x0B] + exampleName.prefix(22), handle: handle)
        script.exchange([0x0C, 0x03, 0x00, 22, 0x00], [0x0D] + exampleName.dropFirst(22), handle: handle)
        script.exchange([0x0A, 0x09, 0x00], [0x0B, 0x00, 0x00], handle: handle)
        script.exchange([0x0A, 0x08, 0x00], [0x01, 0x0A, 0x08, 0x00, 0x05], handle: handle)
    }
}
