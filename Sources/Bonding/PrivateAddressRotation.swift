import BluetoothCore
import SMP

/// When our resolvable private address changes (Core Vol 3 Part C 10.7.1.2, Vol 6 Part B
/// 1.3.2.2): a new RPA from our IRK every ``interval`` (the specification recommends
/// 15 minutes, TGAP(private_addr_int)). Pure bookkeeping over instants the caller passes
/// in, so any clock can drive it and tests can jump through hours without waiting.
public struct PrivateAddressRotation<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public static var defaultInterval: Duration { .seconds(15 * 60) }

    public let identityResolvingKey: SMPValue128
    public let interval: Duration
    /// The RPA in use now.
    public private(set) var address: BluetoothAddress
    /// When ``address`` is due to be replaced.
    public private(set) var expiry: Instant
    /// How many addresses were made, the first included.
    public private(set) var generation: Int = 1

    public init<Generator: RandomNumberGenerator>(
        identityResolvingKey: SMPValue128, interval: Duration = Self.defaultInterval,
        now: Instant, using generator: inout Generator
    ) {
        self.identityResolvingKey = identityResolvingKey
        self.interval = interval > .zero ? interval : Self.defaultInterval
        self.address = .resolvablePrivate(irk: identityResolvingKey, using: &generator)
        self.expiry = now.advanced(by: self.interval)
    }

    public func isDue(at now: Instant) -> Bool { now >= expiry }

    /// Makes the next address when the current one expired; returns it (nil when not due).
    /// A new address always differs from the previous one: the same address twice would
    /// let an observer link the two periods.
    public mutating func rotateIfDue<Generator: RandomNumberGenerator>(at now: Instant, using generator: inout Generator) -> BluetoothAddress? {
        guard isDue(at: now) else { return nil }
        var next = address
        while next == address { next = .resolvablePrivate(irk: identityResolvingKey, using: &generator) }
        address = next
        generation += 1
        // From now, not from the old expiry: after a long suspend one rotation is enough.
        expiry = now.advanced(by: interval)
        return next
    }

    /// The controller refused the new address for now (it was scanning or initiating with
    /// legacy commands): keep the address that is on the air and try again after `delay`.
    public mutating func postpone(_ previous: BluetoothAddress, until retry: Instant) {
        address = previous
        expiry = retry
    }
}
