/// Smooths one beacon's RSSI: a running median over the last few samples, fed into an
/// exponential filter whose weight follows the time between samples.
///
/// Why this pair: RSSI noise on a beacon is mostly fast fading, which shows as single
/// samples 10-30 dB off (a body or a reflection in the way for one packet). A median of
/// five rejects up to two such samples in any five without lagging a real change by more
/// than three samples, which an average cannot do. What survives is a few dB of jitter,
/// which the exponential filter averages away. Its weight is `1 - exp(-Δt/τ)`, so the
/// filter behaves the same whether the beacon advertises at 10 Hz or 1 Hz, and it is a
/// Kalman filter's steady state for a random-walk signal without the bookkeeping.
///
/// With τ = 1 s a step reaches 95 % within about 3 s after the median has switched (three
/// samples: 0.3 s at 10 Hz, 3 s at 1 Hz).
struct RSSIFilter: Sendable {
    struct Sample: Sendable {
        var time: UInt64
        var rssi: Double
    }

    /// Recent raw samples, oldest first; bounded by the configuration's spread window.
    private(set) var recent: [Sample] = []
    private(set) var smoothed: Double?
    private(set) var lastTime: UInt64 = 0
    private(set) var count = 0

    mutating func add(rssi: Int8, at time: UInt64, configuration: BeaconRanger.Configuration) {
        let value = Double(rssi)
        recent.append(Sample(time: time, rssi: value))
        if recent.count > configuration.spreadSampleLimit { recent.removeFirst(recent.count - configuration.spreadSampleLimit) }
        count += 1
        let window = recent.suffix(configuration.medianWindow).map(\.rssi)
        let median = BeaconMath.median(window)
        if let previous = smoothed {
            // A report older than the last one (reordered delivery) still joins the
            // median but moves the filter by nothing.
            let elapsed = time > lastTime ? Double(time - lastTime) : 0
            let weight = 1 - BeaconMath.exponential(-elapsed / Double(configuration.timeConstant))
            smoothed = previous + weight * (median - previous)
        } else {
            smoothed = median
        }
        lastTime = max(lastTime, time)
    }

    /// The spread of recent samples in dB as a robust standard deviation (1.4826 × the
    /// median absolute deviation), so the outliers the median rejects do not inflate it.
    func spread(now: UInt64, configuration: BeaconRanger.Configuration) -> Double {
        let horizon = now > configuration.spreadWindow ? now - configuration.spreadWindow : 0
        let values = recent.filter { $0.time >= horizon }.map(\.rssi)
        guard values.count >= 2 else { return configuration.minimumSpread }
        let center = BeaconMath.median(values)
        let deviation = BeaconMath.median(values.map { abs($0 - center) })
        return max(1.4826 * deviation, configuration.minimumSpread)
    }
}
