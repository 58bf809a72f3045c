/// Apps' display names by bundle identifier, fetched once and kept across sessions (a
/// consumer hands the cache from one connection's session to the next).
///
/// Bounded: an iPhone can name any number of apps. When full, the entry learned longest
/// ago is forgotten (and counted); it is fetched again if that app shows up again.
public struct AppNameCache: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var name: String
        /// The name could not be fetched and this is the bundle identifier standing in.
        public var isFallback: Bool

        public init(name: String, isFallback: Bool) {
            self.name = name
            self.isFallback = isFallback
        }
    }

    public let capacity: Int
    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    public private(set) var evictions = 0

    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    public subscript(appIdentifier: String) -> Entry? { entries[appIdentifier] }

    public var count: Int { entries.count }

    public mutating func insert(_ entry: Entry, for appIdentifier: String) {
        if entries.updateValue(entry, forKey: appIdentifier) == nil { order.append(appIdentifier) }
        if order.count > capacity {
            entries[order.removeFirst()] = nil
            evictions += 1
        }
    }

    /// The cache without its stand-ins, so a new link asks those apps' names again.
    public func removingFallbacks() -> AppNameCache {
        var copy = self
        copy.order = order.filter { entries[$0]?.isFallback == false }
        copy.entries = entries.filter { !$0.value.isFallback }
        return copy
    }
}
