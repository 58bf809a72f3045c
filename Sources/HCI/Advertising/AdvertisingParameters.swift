import BluetoothCore

/// What one advertising set does on the air (Core Vol 4 Part E 7.8.5 and 7.8.53; Vol 6
/// Part B 2.3). Directed advertising is not offered: it needs a peer and privacy handling
/// the stack does not have yet.
public struct AdvertisingParameters: Sendable, Equatable {
    /// The kind of undirected advertising.
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// Others may connect. With legacy PDUs this is ADV_IND, which is also scannable;
        /// with extended PDUs the specification forbids connectable *and* scannable, so
        /// an extended connectable set carries no scan response.
        case connectableUndirected
        /// Others may ask for the scan response but not connect (ADV_SCAN_IND).
        case scannableUndirected
        /// A broadcast: no connection, no scan response (ADV_NONCONN_IND), as beacons do.
        case nonConnectableUndirected

        public var description: String {
            switch self {
            case .connectableUndirected: "connectable"
            case .scannableUndirected: "scannable"
            case .nonConnectableUndirected: "non-connectable"
            }
        }
    }

    /// Which PDUs carry the advertisement on a controller with LE Extended Advertising.
    public enum PDUFormat: Sendable, Equatable {
        /// Legacy PDUs when the data and scan response fit 31 bytes and nothing asks for an
        /// extended-only feature (a secondary PHY other than LE 1M, LE Coded primary PHY,
        /// an interval beyond 10.24 s, a connectable set without scan response that is
        /// nevertheless asked to be extended); extended PDUs otherwise. Legacy PDUs are
        /// heard by every scanner, including pre-5.0 phones and iBeacon receivers, which
        /// is why they are preferred when they suffice.
        case automatic
        /// Legacy PDUs (ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND); on an extended controller,
        /// an extended set with the "use legacy PDUs" property (event properties bit 4).
        case legacy
        /// Extended PDUs (ADV_EXT_IND plus AUX_ADV_IND): up to the controller's maximum
        /// data length, other PHYs, but only scanners of Bluetooth 5.0 or later hear them.
        case extended
    }

    /// Whose address the advertisement carries.
    public enum OwnAddress: Sendable, Equatable {
        /// The controller's public address (BD_ADDR).
        case `public`
        /// The advertiser's random static address, generated once per ``Advertiser``.
        case randomStatic
        /// A random address the caller chose (static, or a private address it manages).
        case random(BluetoothAddress)
    }

    public var kind: Kind
    /// The shortest time between advertising events; converted to 0.625 ms units (rounded
    /// to the nearest). Legacy advertising allows 20 ms ... 10.24 s, extended advertising
    /// 20 ms ... 0xFFFFFF units (about 2.9 hours).
    public var interval: Duration
    /// The longest time between advertising events; nil means the same as ``interval``.
    public var maximumInterval: Duration?
    public var pduFormat: PDUFormat
    public var ownAddress: OwnAddress
    /// The transmit power to ask for, in dBm (-127 ... 20); nil leaves it to the
    /// controller. Only extended advertising commands can ask; the controller reports the
    /// power it selected in ``AdvertisingSet/selectedTxPower``.
    public var txPower: Int8?
    /// Extended PDUs only: the PHY of ADV_EXT_IND (LE 1M or LE Coded).
    public var primaryPHY: LEPHY
    /// Extended PDUs only: the PHY of AUX_ADV_IND and its chain.
    public var secondaryPHY: LEPHY
    /// Extended sets only: the Advertising SID (0 ... 15) that scanners use to tell sets
    /// of one device apart.
    public var advertisingSID: UInt8
    public var channelMap: AdvertisingChannelMap
    /// Extended sets only: the controller stops the set after this long (10 ms ... 655.35 s,
    /// in 10 ms units); nil advertises until stopped.
    public var duration: Duration?
    /// Extended sets only: the controller stops the set after this many advertising
    /// events (1 ... 255); nil means no limit.
    public var maximumEvents: UInt8?

    public init(
        kind: Kind,
        interval: Duration = .milliseconds(100),
        maximumInterval: Duration? = nil,
        pduFormat: PDUFormat = .automatic,
        ownAddress: OwnAddress = .public,
        txPower: Int8? = nil,
        primaryPHY: LEPHY = .le1M,
        secondaryPHY: LEPHY = .le1M,
        advertisingSID: UInt8 = 0,
        channelMap: AdvertisingChannelMap = .all,
        duration: Duration? = nil,
        maximumEvents: UInt8? = nil
    ) {
        self.kind = kind
        self.interval = interval
        self.maximumInterval = maximumInterval
        self.pduFormat = pduFormat
        self.ownAddress = ownAddress
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.channelMap = channelMap
        self.duration = duration
        self.maximumEvents = maximumEvents
    }
}

/// Conversions between durations and the specification's time units.
enum AdvertisingTime {
    /// 0.625 ms in nanoseconds: the unit of advertising intervals.
    static let intervalUnitNanoseconds: Int64 = 625_000
    /// Legacy: 0x0020 ... 0x4000 (Core Vol 4 Part E 7.8.5).
    static let legacyIntervalUnits: ClosedRange<UInt32> = 0x0020...0x4000
    /// Extended: 0x000020 ... 0xFFFFFF (7.8.53).
    static let extendedIntervalUnits: ClosedRange<UInt32> = 0x0020...LESetExtendedAdvertisingParameters.maximumInterval

    static func nanoseconds(_ duration: Duration) -> Int64? {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        let (sum, sumOverflow) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sumOverflow ? nil : sum
    }

    /// The nearest whole number of `unitNanoseconds`, or nil when negative or beyond UInt32.
    static func units(_ duration: Duration, unitNanoseconds: Int64) -> UInt32? {
        guard let nanoseconds = nanoseconds(duration), nanoseconds >= 0 else { return nil }
        let rounded = (nanoseconds + unitNanoseconds / 2) / unitNanoseconds
        return rounded <= Int64(UInt32.max) ? UInt32(rounded) : nil
    }

    static func duration(units: UInt32, unitNanoseconds: Int64) -> Duration {
        .nanoseconds(Int64(units) * unitNanoseconds)
    }

    /// "20 ms", "10240 ms", "2.5 ms": what an error message shows.
    static func text(_ duration: Duration) -> String {
        guard let nanoseconds = nanoseconds(duration) else { return "\(duration)" }
        let microseconds = nanoseconds / 1000
        let milliseconds = microseconds / 1000
        let fraction = abs(microseconds % 1000)
        if fraction == 0 { return "\(milliseconds) ms" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(milliseconds).\(digits) ms"
    }
}
