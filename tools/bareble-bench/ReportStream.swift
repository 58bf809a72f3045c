import BluetoothCore
import HCI

/// A generated stream of LE Extended Advertising Report events (or legacy LE Advertising
/// Report events), one report each, as a controller sends them (H4 frames). Each
/// advertisement carries a realistic 31-byte payload (flags, a complete name, two 16-bit
/// services, manufacturer data) whose last 8 bytes are a slot for the monotonic time the
/// frame was written, so latency can be measured at the consumer.
struct ReportStream {
    let frames: [[UInt8]]
    /// Where the time slot ends, counted from the end of a frame: a legacy report's RSSI
    /// follows its data.
    let slotEndFromBack: Int

    init(count: Int, devices: Int, seed: UInt64, legacy: Bool = false) {
        var random = SplitMix(seed: seed)
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            let device = index % max(1, devices)
            let name = Array("Dev-\(String(device, radix: 16))".utf8.prefix(8))
            var data: [UInt8] = [0x02, 0x01, 0x06]
            data += [UInt8(name.count + 1), 0x09] + name
            data += [0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18]
            data += [0x0B, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 8)
            let report = LEExtendedAdvertisingReport.Report(
                eventType: [.connectable, .scannable, .legacy],
                addressType: .random,
                address: BluetoothAddress(0xC0_0000_0000_00 | UInt64(device)),
                primaryPHY: .le1M, secondaryPHY: .none, advertisingSID: 0xFF, txPower: 127,
                rssi: Int8(-40 - Int(random.next() % 50)), periodicAdvertisingInterval: 0,
                directAddressType: .public, directAddress: .zero, data: data)
            let event: HCIEvent
            if legacy {
                event = .le(.advertisingReport(LEAdvertisingReport(reports: [.init(
                    eventType: .advInd, addressType: .random, address: report.address, data: data, rssi: report.rssi)])))
            } else {
                event = .le(.extendedAdvertisingReport(LEExtendedAdvertisingReport(reports: [report])))
            }
            frames.append([UInt8(0x04)] + event.encode())
        }
        self.frames = frames
        slotEndFromBack = legacy ? 1 : 0
    }

    /// Every frame back to back: what a controller would push at full speed.
    var concatenated: [UInt8] { frames.flatMap { $0 } }

    func stamp(_ frame: inout [UInt8], _ nanoseconds: UInt64) {
        let offset = frame.count - slotEndFromBack - 8
        for byte in 0..<8 { frame[offset + byte] = UInt8(truncatingIfNeeded: nanoseconds >> (8 * UInt64(byte))) }
    }

    /// The timestamp back out of an advertisement's data (its last 8 bytes).
    static func timestamp(inData data: [UInt8]) -> UInt64 {
        guard data.count >= 8 else { return 0 }
        var value: UInt64 = 0
        for byte in (data.count - 8..<data.count).reversed() { value = value << 8 | UInt64(data[byte]) }
        return value
    }
}

/// The benchmark's own deterministic generator, so runs are comparable.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
