import BluetoothCore
import HCI

/// Ranges beacons from the advertisements a scanner hears (Core Location's
/// startRangingBeacons and didRangeBeacons, without a radio or a clock).
///
/// Pure: time is the advertisements' monotonic timestamps and the `now` given to
/// ``tick(now:)``, so a recorded scan replays to the same reports. Not an actor, so the
/// caller decides where it lives (the host's scanning task, a test).
public struct BeaconRanger: Sendable {
    /// Every number the ranging depends on; the defaults are documented in specs/beacon.md.
    public struct Configuration: Sendable, Hashable {
        public var model = PathLossModel()
        /// Samples in the outlier-rejecting median.
        public var medianWindow = 5
        /// The exponential filter's time constant, ns.
        public var timeConstant: UInt64 = 1_000_000_000
        /// The spread behind ``RangedBeacon/accuracy`` uses samples this recent (ns) ...
        public var spreadWindow: UInt64 = 5_000_000_000
        /// ... and at most this many of them.
        public var spreadSampleLimit = 20
        /// The spread never counts as less than this many dB: even a steady RSSI is only
        /// good to about a decibel, and an accuracy of zero would be a lie.
        public var minimumSpread = 1.0
        /// Samples needed before a proximity is given (three lets the median reject one
        /// outlier from the start).
        public var minimumSamples = 3
        /// Not heard for longer than this (ns): proximity unknown.
        public var staleAfter: UInt64 = 5_000_000_000
        /// Not heard for longer than this (ns): dropped from the reports.
        public var forgetAfter: UInt64 = 30_000_000_000
        /// Below this many metres: immediate.
        public var immediateDistance = 0.5
        /// Below this many metres: near; otherwise far.
        public var nearDistance = 3.0
        /// A beacon replaces the current closest only when its path loss is lower by at
        /// least this many dB (a distance ratio of 10^(margin / 10n): 1.26 at the defaults).
        public var closestMargin = 2.0
        /// The ranging period, ns.
        public var period: UInt64 = 1_000_000_000
        /// The most beacons tracked at once. A new one past it replaces the one heard
        /// longest ago (counted in ``BeaconRanger/beaconsEvicted``): an advertiser cycling
        /// identities (iBeacon major/minor, Eddystone EIDs, new ones every packet) cannot
        /// grow the table, whose every report sorts it.
        public var maximumBeacons = 1024

        public init() {}
    }

    public var configuration: Configuration

    private struct Track: Sendable {
        var frame: BeaconFrame
        var address: DeviceAddress?
        var measuredPower: Int
        var lastRSSI: Int8
        var filter = RSSIFilter()
    }

    private var tracks: [BeaconIdentity: Track] = [:]
    /// Beacons forgotten to make room (``Configuration/maximumBeacons``).
    public private(set) var beaconsEvicted = 0
    private var closest: BeaconIdentity?
    private var nextTickDue: UInt64?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The monotonic time (ns) from which ``tick(now:)`` next produces a report; nil
    /// before the first tick, which is always due.
    public var nextTick: UInt64? { nextTickDue }

    /// Takes in one advertisement. Returns the identity it was counted for, or nil when it
    /// is no beacon, a TLM frame, a beacon without a calibrated power, or has no RSSI.
    @discardableResult
    public mutating func observe(_ advertisement: Advertisement) -> BeaconIdentity? {
        guard let rssi = advertisement.rssi, let frame = BeaconFrame.decode(advertisement) else { return nil }
        return observe(frame, rssi: rssi, at: advertisement.timestamp, address: advertisement.address)
    }

    /// Takes in one decoded frame heard at `rssi` dBm at monotonic `time` (ns).
    @discardableResult
    public mutating func observe(_ frame: BeaconFrame, rssi: Int8, at time: UInt64, address: DeviceAddress? = nil) -> BeaconIdentity? {
        guard let identity = frame.identity, let measuredPower = frame.measuredPowerAtOneMeter else { return nil }
        if tracks[identity] == nil, tracks.count >= max(1, configuration.maximumBeacons),
           let oldest = tracks.min(by: { $0.value.filter.lastTime < $1.value.filter.lastTime })?.key {
            tracks[oldest] = nil
            beaconsEvicted += 1
        }
        var track = tracks[identity] ?? Track(frame: frame, measuredPower: measuredPower, lastRSSI: rssi)
        track.frame = frame
        track.address = address ?? track.address
        track.measuredPower = measuredPower
        track.lastRSSI = rssi
        track.filter.add(rssi: rssi, at: time, configuration: configuration)
        tracks[identity] = track
        return identity
    }

    /// Forgets every beacon (Core Location's stopRangingBeacons).
    public mutating func reset() {
        tracks.removeAll()
        closest = nil
        nextTickDue = nil
    }

    /// The report for monotonic time `now` (ns), or nil when the next period has not begun.
    /// Reports keep a fixed cadence: each is due one period after the previous was due, and
    /// a caller that falls behind by more than a period restarts the cadence from `now`.
    public mutating func tick(now: UInt64) -> RangingReport? {
        if let due = nextTickDue, now < due { return nil }
        var next = (nextTickDue ?? now) + configuration.period
        if next <= now { next = now + configuration.period }
        nextTickDue = next
        return report(now: now)
    }

    /// The ranging state at `now` regardless of cadence; moves the closest-beacon state on.
    public mutating func report(now: UInt64) -> RangingReport {
        tracks = tracks.filter { elapsed(since: $0.value.filter.lastTime, now: now) <= configuration.forgetAfter }
        let beacons = tracks.map { ranged($0.key, $0.value, now: now) }.sorted(by: Self.nearestFirst)
        let candidate = beacons.first { $0.proximity != .unknown }
        let current = closest.flatMap { identity in beacons.first { $0.identity == identity && $0.proximity != .unknown } }
        let chosen: BeaconIdentity?
        if let current, let candidate, candidate.identity != current.identity {
            chosen = pathLoss(current) - pathLoss(candidate) >= configuration.closestMargin ? candidate.identity : current.identity
        } else {
            chosen = current?.identity ?? candidate?.identity
        }
        let change = chosen == closest ? nil : ClosestBeaconChange(previous: closest, current: chosen)
        closest = chosen
        return RangingReport(time: now, beacons: beacons, closest: chosen, closestChange: change)
    }

    private func ranged(_ identity: BeaconIdentity, _ track: Track, now: UInt64) -> RangedBeacon {
        let filter = track.filter
        var beacon = RangedBeacon(
            identity: identity, frame: track.frame, address: track.address, proximity: .unknown,
            rssi: nil, distance: nil, accuracy: nil, measuredPower: track.measuredPower,
            sampleCount: filter.count, lastHeard: filter.lastTime, lastRSSI: track.lastRSSI
        )
        guard filter.count >= configuration.minimumSamples,
              elapsed(since: filter.lastTime, now: now) <= configuration.staleAfter,
              let rssi = filter.smoothed
        else { return beacon }
        let model = configuration.model
        let power = Double(track.measuredPower)
        let distance = model.distance(rssi: rssi, measuredPower: power)
        beacon.rssi = rssi
        beacon.distance = distance
        beacon.accuracy = model.accuracy(rssi: rssi, measuredPower: power, spread: filter.spread(now: now, configuration: configuration))
        beacon.proximity = distance < configuration.immediateDistance ? .immediate
            : distance < configuration.nearDistance ? .near : .far
        return beacon
    }

    private func pathLoss(_ beacon: RangedBeacon) -> Double {
        Double(beacon.measuredPower) - (beacon.rssi ?? -Double.infinity)
    }

    private func elapsed(since time: UInt64, now: UInt64) -> UInt64 { now > time ? now - time : 0 }

    private static func nearestFirst(_ a: RangedBeacon, _ b: RangedBeacon) -> Bool {
        switch (a.distance, b.distance) {
        case let (x?, y?): x == y ? a.identity < b.identity : x < y
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): a.identity < b.identity
        }
    }
}
