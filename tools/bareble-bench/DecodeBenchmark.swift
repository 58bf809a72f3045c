import BluetoothCore
import CAllocationCounter
import HCI

/// The cost of turning one report event's bytes into what a consumer reads: HCI event
/// decoding, advertising data parsing, the name and service accessors. No I/O.
struct DecodeBenchmark {
    struct Result {
        var nanosecondsPerReport: Double
        var allocationsPerReport: Double
        var bytesPerReport: Double
    }

    /// Best of `rounds` passes over the stream (the first pass warms caches and allocators).
    static func run(_ stream: ReportStream, rounds: Int = 5) -> Result {
        let packets = stream.frames.map { Array($0.dropFirst()) }
        var best = Double.infinity
        var sink = 0
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            for packet in packets { sink &+= decode(packet) }
            let elapsed = ContinuousClock.now - start
            best = min(best, nanoseconds(elapsed) / Double(packets.count))
        }
        let before = (bareble_allocation_count(), bareble_allocated_bytes())
        bareble_allocation_counter_enable(1)
        for packet in packets { sink &+= decode(packet) }
        bareble_allocation_counter_enable(0)
        let count = Double(packets.count)
        precondition(sink != 42, "keeps the optimizer from dropping the work")
        return Result(
            nanosecondsPerReport: best,
            allocationsPerReport: Double(bareble_allocation_count() - before.0) / count,
            bytesPerReport: Double(bareble_allocated_bytes() - before.1) / count)
    }

    @inline(never)
    static func decode(_ packet: [UInt8]) -> Int {
        guard case let .le(.extendedAdvertisingReport(event))? = try? HCIEvent(decoding: packet) else { return 0 }
        var total = 0
        for report in event.reports {
            let data = AdvertisingData(report.data)
            total &+= (data.localName?.utf8.count ?? 0) &+ data.serviceUUIDs.count &+ Int(report.rssi)
        }
        return total
    }
}

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}
