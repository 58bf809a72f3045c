/// Why ``AdvertisingDataBuilder`` refused to build advertising data.
public enum AdvertisingDataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `element` takes `needed` bytes (length and type octets included) but only
    /// `available` of the `limit` are left after the elements before it.
    case overflow(element: String, needed: Int, available: Int, limit: Int)
    /// `element` carries `length` bytes of data, more than the 254 one AD structure can
    /// hold (its length octet counts the type octet too).
    case structureTooLong(element: String, length: Int)
    /// `element` is a list with nothing in it.
    case emptyList(element: String)
    /// The limit is outside 0...1650, the most extended advertising can carry.
    case invalidLimit(Int)

    public var description: String {
        switch self {
        case let .overflow(element, needed, available, limit):
            "\(element) needs \(needed) bytes but only \(available) of \(limit) are left"
        case let .structureTooLong(element, length):
            "\(element) has \(length) bytes of data but an AD structure holds at most 254"
        case let .emptyList(element):
            "\(element): the list is empty; leave it out or add an entry"
        case let .invalidLimit(limit):
            "limit \(limit) is outside 0...1650 (31 for legacy advertising, up to 1650 for extended)"
        }
    }
}
