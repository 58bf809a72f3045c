import BluetoothCore

/// One beacon as a ranging tick sees it (Core Location's CLBeacon).
public struct RangedBeacon: Sendable, Hashable, CustomStringConvertible {
    public var identity: BeaconIdentity
    /// The latest frame that carried this identity.
    public var frame: BeaconFrame
    /// The address it was last heard from.
    public var address: DeviceAddress?
    public var proximity: BeaconProximity
    /// Smoothed RSSI in dBm; nil while proximity is unknown.
    public var rssi: Double?
    /// Estimated distance in metres; nil while proximity is unknown.
    public var distance: Double?
    /// How much farther than ``distance`` the beacon may be, in metres, at one robust
    /// standard deviation of recent RSSI; nil while proximity is unknown.
    public var accuracy: Double?
    /// RSSI in dBm expected at 1 m (Eddystone's 0 m power less 41 dB).
    public var measuredPower: Int
    /// Samples taken since the beacon was first heard.
    public var sampleCount: Int
    /// Monotonic nanoseconds of the last sample.
    public var lastHeard: UInt64
    /// The raw RSSI of the latest sample, dBm (beside the smoothed ``rssi``).
    public var lastRSSI: Int8

    public var description: String {
        guard let distance, let accuracy, let rssi else { return "\(identity): unknown" }
        let rounded = (distance * 100).rounded() / 100
        let error = (accuracy * 100).rounded() / 100
        return "\(identity): \(proximity) \(rounded) m (+\(error) m), RSSI \((rssi * 10).rounded() / 10) dBm"
    }
}

/// The nearest beacon changed (or there stopped being one).
public struct ClosestBeaconChange: Sendable, Hashable {
    public var previous: BeaconIdentity?
    public var current: BeaconIdentity?

    public init(previous: BeaconIdentity?, current: BeaconIdentity?) {
        self.previous = previous
        self.current = current
    }
}

/// What one ranging tick produced (Core Location's didRangeBeacons).
public struct RangingReport: Sendable, Hashable {
    /// Monotonic nanoseconds of the tick.
    public var time: UInt64
    /// Nearest first, beacons of unknown proximity last.
    public var beacons: [RangedBeacon]
    /// The nearest beacon after hysteresis; nil when no beacon has a known proximity.
    public var closest: BeaconIdentity?
    /// Set when ``closest`` differs from the previous tick's.
    public var closestChange: ClosestBeaconChange?
}
