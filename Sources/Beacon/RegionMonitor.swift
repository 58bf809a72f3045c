import HCI

/// Whether the user is in a region (Core Location's CLRegionState).
public enum RegionState: Sendable, Hashable, CustomStringConvertible {
    /// Monitoring began less than one exit timeout ago and nothing matching was heard.
    case unknown
    case inside
    case outside

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .inside: "inside"
        case .outside: "outside"
        }
    }
}

/// A region boundary crossing (Core Location's didEnterRegion and didExitRegion).
public enum RegionEvent: Sendable, Hashable, CustomStringConvertible {
    case entered(BeaconRegion)
    case exited(BeaconRegion)

    public var description: String {
        switch self {
        case let .entered(region): "entered \(region)"
        case let .exited(region): "exited \(region)"
        }
    }
}

/// Watches several beacon regions at once (Core Location's startMonitoring(for:)).
///
/// Entering is immediate: the first matching advertisement is proof of presence. Exiting
/// needs absence, which only time shows, so it is evaluated by ``tick(now:)``: a region is
/// left once nothing matching has been heard for the exit timeout (30 s, as iOS). Driven at
/// the ranging period, an exit is reported within exit timeout + one period of the last
/// sighting. Pure, like ``BeaconRanger``: time comes from timestamps and `now`.
public struct RegionMonitor: Sendable {
    /// Silence (ns) after which an inside region is exited and an unknown one is outside.
    public var exitTimeout: UInt64

    private struct Watch: Sendable {
        var region: BeaconRegion
        var state: RegionState
        var since: UInt64?
        var lastSighting: UInt64?
    }

    /// In the order monitoring began, so events come out in a stable order.
    private var watches: [Watch] = []

    public init(exitTimeout: UInt64 = 30_000_000_000) {
        self.exitTimeout = exitTimeout
    }

    /// The regions being monitored, in the order monitoring began.
    public var regions: [BeaconRegion] { watches.map(\.region) }

    /// Begins monitoring `region` (replacing one with the same identifier) in state unknown.
    /// `now` starts the clock after which silence means outside; without it, the first
    /// tick does.
    public mutating func startMonitoring(_ region: BeaconRegion, now: UInt64? = nil) {
        let watch = Watch(region: region, state: .unknown, since: now, lastSighting: nil)
        if let index = watches.firstIndex(where: { $0.region.identifier == region.identifier }) {
            watches[index] = watch
        } else {
            watches.append(watch)
        }
    }

    public mutating func stopMonitoring(_ region: BeaconRegion) {
        watches.removeAll { $0.region.identifier == region.identifier }
    }

    /// The state of a monitored region, looked up by identifier; nil when not monitored.
    public func state(of region: BeaconRegion) -> RegionState? {
        watches.first { $0.region.identifier == region.identifier }?.state
    }

    /// Takes in one advertisement; returns the regions it made us enter. An RSSI is not
    /// needed: hearing the beacon at all is presence.
    public mutating func observe(_ advertisement: Advertisement) -> [RegionEvent] {
        guard let identity = BeaconFrame.decode(advertisement)?.identity else { return [] }
        return observe(identity, at: advertisement.timestamp)
    }

    /// Takes in one sighting of `identity` at monotonic `time` (ns).
    public mutating func observe(_ identity: BeaconIdentity, at time: UInt64) -> [RegionEvent] {
        var events: [RegionEvent] = []
        for index in watches.indices where watches[index].region.contains(identity) {
            watches[index].lastSighting = max(watches[index].lastSighting ?? time, time)
            if watches[index].state != .inside {
                watches[index].state = .inside
                events.append(.entered(watches[index].region))
            }
        }
        return events
    }

    /// Evaluates absence at monotonic `now` (ns): regions silent for the exit timeout are
    /// exited; regions never heard for that long since monitoring began become outside
    /// without an event, since nothing was entered.
    public mutating func tick(now: UInt64) -> [RegionEvent] {
        var events: [RegionEvent] = []
        for index in watches.indices {
            let watch = watches[index]
            switch watch.state {
            case .inside:
                if let last = watch.lastSighting, now >= last, now - last >= exitTimeout {
                    watches[index].state = .outside
                    events.append(.exited(watch.region))
                }
            case .unknown:
                guard let since = watch.since else {
                    watches[index].since = now
                    continue
                }
                if now >= since, now - since >= exitTimeout { watches[index].state = .outside }
            case .outside:
                break
            }
        }
        return events
    }
}
