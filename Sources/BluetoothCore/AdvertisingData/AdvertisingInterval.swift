/// An advertising interval as the Advertising Interval and Advertising Interval - long AD
/// types carry it (Core Specification Supplement Part A 1.15 and 1.26): a count of
/// 0.625 ms units.
public struct AdvertisingInterval: Hashable, Sendable, CustomStringConvertible {
    /// The interval in units of 0.625 ms (at most 24 bits in 0x2F's 3-octet form,
    /// 32 bits in its 4-octet form).
    public var units: UInt32

    public init(units: UInt32) { self.units = units }

    /// The interval in milliseconds.
    public var milliseconds: Double { Double(units) * 0.625 }

    public var description: String { "\(milliseconds) ms" }
}
