import BluetoothCore

/// Pairs a scannable advertisement with the scan response that answers it, so an active
/// scan delivers one ``Advertisement`` per device event instead of two halves.
///
/// Rules (no timers: every decision is taken when a report arrives or scanning stops):
/// - A scannable, non-scan-response advertisement is held while scanning is active.
/// - A scan response from the same address and advertising set completes the held one;
///   both leave together, with the response's RSSI and timestamp (the moment the whole
///   value existed). One device may run several sets from one address (extended
///   advertising): their Advertising SIDs keep them apart, and a report with no SID
///   (legacy, or a controller that gives a response none) matches any set of its address.
/// - A scan response with nothing held is delivered alone, marked
///   ``Advertisement/EventType/scanResponseOnly``.
/// - A new advertisement from a set that already has one held pushes the held one out
///   alone first: its response is not coming.
/// - At most ``capacity`` are held; the oldest leaves alone to make room.
/// - On every report, held ones older than ``maximumAge`` leave alone; on stop, all do.
struct ScanResponseMerger: Sendable {
    static let defaultCapacity = 32
    /// A scan response follows its advertisement within a few hundred microseconds on
    /// the air; 200 ms covers busy controllers without delaying anything noticeably.
    static let defaultMaximumAge: UInt64 = 200_000_000

    let capacity: Int
    let maximumAge: UInt64
    /// Oldest first; capacity is small, so linear search.
    private(set) var held: [Advertisement] = []

    init(capacity: Int = ScanResponseMerger.defaultCapacity, maximumAge: UInt64 = ScanResponseMerger.defaultMaximumAge) {
        self.capacity = max(1, capacity)
        self.maximumAge = maximumAge
    }

    /// Sends what is ready to `output`, in the order it became ready.
    mutating func add(
        _ advertisement: Advertisement, expectScanResponses: Bool,
        output: inout [Advertisement], statistics: inout ScanStatistics
    ) {
        flushExpired(now: advertisement.timestamp, output: &output, statistics: &statistics)
        let index = held.isEmpty ? nil : held.firstIndex { held in
            held.address == advertisement.address
                && (held.advertisingSID == advertisement.advertisingSID || held.advertisingSID == nil || advertisement.advertisingSID == nil)
        }
        if advertisement.eventType.contains(.scanResponseOnly) {
            guard let index else {
                statistics.unpairedScanResponses += 1
                output.append(advertisement)
                return
            }
            var merged = held.remove(at: index)
            merged.scanResponseData = advertisement.scanResponseData
            merged.eventType.insert(.scanResponse)
            merged.rssi = advertisement.rssi ?? merged.rssi
            merged.timestamp = advertisement.timestamp
            if merged.isTruncated == false { merged.isTruncated = advertisement.isTruncated }
            statistics.mergedScanResponses += 1
            output.append(merged)
            return
        }
        if let index {
            statistics.heldAdvertisementsDeliveredAlone += 1
            output.append(held.remove(at: index))
        }
        guard expectScanResponses, advertisement.eventType.contains(.scannable) else {
            output.append(advertisement)
            return
        }
        if held.count >= capacity {
            statistics.heldAdvertisementsDeliveredAlone += 1
            output.append(held.removeFirst())
        }
        held.append(advertisement)
    }

    mutating func flushExpired(now: UInt64, output: inout [Advertisement], statistics: inout ScanStatistics) {
        // Timestamps only grow on one reader thread; a clock step backwards flushes too.
        while let first = held.first, now &- first.timestamp >= maximumAge || now < first.timestamp {
            statistics.heldAdvertisementsDeliveredAlone += 1
            output.append(held.removeFirst())
        }
    }

    mutating func flushAll(output: inout [Advertisement], statistics: inout ScanStatistics) {
        statistics.heldAdvertisementsDeliveredAlone += held.count
        output.append(contentsOf: held)
        held.removeAll()
    }
}
