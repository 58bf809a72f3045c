import BluetoothCore

/// One consumer's memory for its ``DuplicatePolicy``: per device, what was last delivered.
///
/// Bounded: past the limit, the least recently seen devices are forgotten. Finding them is a
/// pass over the table, so it is done for an eighth of the limit at a time, which keeps the
/// cost per report constant on average while a crowd of new devices streams past.
struct DuplicateTracker: Sendable {
    struct Entry: Sendable {
        var lastSeen: UInt64
        var dataHash: Int
        var rssi: Int8?
        var deliveredAt: UInt64
    }

    let policy: DuplicatePolicy
    let limit: Int
    private let intervalNanoseconds: UInt64
    private let rssiDelta: Int
    private(set) var entries: [DeviceAddress: Entry] = [:]
    /// Increases with every report: the recency order, immune to equal timestamps.
    private var sequence: UInt64 = 0

    init(policy: DuplicatePolicy, limit: Int) {
        self.policy = policy
        self.limit = max(1, limit)
        if case let .whenRSSIChanges(delta, interval) = policy {
            rssiDelta = max(0, delta)
            intervalNanoseconds = MonotonicClock.nanoseconds(in: interval)
        } else {
            rssiDelta = 0
            intervalNanoseconds = 0
        }
    }

    /// Whether to deliver `advertisement`, remembering it when delivered.
    mutating func shouldDeliver(_ advertisement: Advertisement) -> Bool {
        if case .all = policy { return true }
        sequence &+= 1
        let key = advertisement.address
        guard var entry = entries[key] else {
            entries[key] = Entry(
                lastSeen: sequence, dataHash: Self.hash(advertisement),
                rssi: advertisement.rssi, deliveredAt: advertisement.timestamp
            )
            if entries.count > limit { forgetLeastRecentlySeen() }
            return true
        }
        entry.lastSeen = sequence
        let deliver: Bool
        switch policy {
        case .all:
            deliver = true
        case .firstPerDevice:
            deliver = false
        case .whenDataChanges:
            let hash = Self.hash(advertisement)
            deliver = hash != entry.dataHash
            entry.dataHash = hash
        case .whenRSSIChanges:
            deliver = rssiMoved(from: entry.rssi, to: advertisement.rssi)
                || advertisement.timestamp &- entry.deliveredAt >= intervalNanoseconds
                || advertisement.timestamp < entry.deliveredAt
            if deliver {
                entry.rssi = advertisement.rssi
                entry.deliveredAt = advertisement.timestamp
            }
        }
        entries[key] = entry
        return deliver
    }

    private func rssiMoved(from old: Int8?, to new: Int8?) -> Bool {
        switch (old, new) {
        case let (old?, new?): abs(Int(new) - Int(old)) > rssiDelta
        case (nil, nil): false
        default: true
        }
    }

    /// A hash of both payloads: remembering a hash, not the bytes, keeps memory per device
    /// fixed. Hasher's per-process seed is fine, the values never leave the process.
    private static func hash(_ advertisement: Advertisement) -> Int {
        var hasher = Hasher()
        hasher.combine(advertisement.advertisingData.bytes)
        hasher.combine(advertisement.scanResponseData?.bytes)
        return hasher.finalize()
    }

    private mutating func forgetLeastRecentlySeen() {
        let excess = entries.count - limit
        let batch = max(excess, limit / 8, 1)
        guard batch < entries.count else {
            entries.removeAll(keepingCapacity: true)
            return
        }
        // The batch-th smallest lastSeen is the cut: everything at or below it goes.
        var seen = entries.values.map(\.lastSeen)
        seen.sort()
        let cut = seen[batch - 1]
        entries = entries.filter { $0.value.lastSeen > cut }
    }
}
