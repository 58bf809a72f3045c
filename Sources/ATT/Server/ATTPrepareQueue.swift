/// One bearer's queue of prepared writes (Core 5.4 Vol 3 Part F 3.4.6), with a quota: the
/// peer fills it, so it is bounded in entries and in bytes, and a Prepare Write Request past
/// either answers Prepare Queue Full (0x09). Each bearer has its own, so one client filling
/// its queue takes nothing from another's.
struct ATTPrepareQueue: Sendable {
    struct Entry: Sendable {
        let attribute: ATTAttribute
        let offset: UInt16
        let value: [UInt8]
    }

    let entryLimit: Int
    let byteLimit: Int
    private(set) var entries: [Entry] = []
    private(set) var bytes = 0

    init(entryLimit: Int, byteLimit: Int) {
        self.entryLimit = entryLimit
        self.byteLimit = byteLimit
    }

    /// Queues a part; false, with nothing queued, when the quota would be passed.
    mutating func append(_ entry: Entry) -> Bool {
        guard entries.count < entryLimit, bytes + entry.value.count <= byteLimit else { return false }
        entries.append(entry)
        bytes += entry.value.count
        return true
    }

    /// Takes every entry out, grouped per attribute in the order each first appeared (the
    /// order values are written in), the parts of one attribute in queue order.
    mutating func takeAll() -> [(attribute: ATTAttribute, parts: [Entry])] {
        defer { removeAll() }
        var order: [UInt16] = []
        var parts: [UInt16: [Entry]] = [:]
        for entry in entries {
            let handle = entry.attribute.handle
            if parts[handle] == nil { order.append(handle) }
            parts[handle, default: []].append(entry)
        }
        return order.compactMap { handle in
            guard let group = parts[handle], let first = group.first else { return nil }
            return (first.attribute, group)
        }
    }

    mutating func removeAll() {
        entries = []
        bytes = 0
    }
}
