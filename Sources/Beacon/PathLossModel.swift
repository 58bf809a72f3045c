/// The log-distance path-loss model: received power falls by `10 n` dB per decade of
/// distance from a calibration point at 1 m, so
///
///     d = 10 ^ ((measuredPower - rssi) / (10 n))   metres
///
/// n is 2 in free space, about 1.6-1.8 down a corridor, 2.7-4 through furniture and
/// people. The model's weakness is its sensitivity: at n = 2 every 6 dB of RSSI error
/// doubles or halves the distance, and indoor RSSI routinely wanders ±4 dB, so a distance
/// is good to a proximity class, not to a metre.
public struct PathLossModel: Sendable, Hashable {
    public var exponent: Double

    public init(exponent: Double = 2.0) { self.exponent = exponent }

    /// Metres for an RSSI, given the RSSI expected at 1 m.
    public func distance(rssi: Double, measuredPower: Double) -> Double {
        BeaconMath.powerOfTen((measuredPower - rssi) / (10 * exponent))
    }

    /// How much farther the beacon may be if the true RSSI is `spread` dB weaker than
    /// measured: the one-sided error on the far side, which is the larger side because
    /// distance grows exponentially with path loss.
    public func accuracy(rssi: Double, measuredPower: Double, spread: Double) -> Double {
        distance(rssi: rssi - spread, measuredPower: measuredPower) - distance(rssi: rssi, measuredPower: measuredPower)
    }
}

/// How close a beacon is, with Core Location's CLProximity meanings.
public enum BeaconProximity: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Within about half a metre: held against the beacon.
    case immediate
    /// Within a few metres: in the same part of the room.
    case near
    /// Heard, but farther.
    case far
    /// Too few samples yet, or not heard for longer than the staleness limit.
    case unknown

    public var description: String {
        switch self {
        case .immediate: "immediate"
        case .near: "near"
        case .far: "far"
        case .unknown: "unknown"
        }
    }
}
