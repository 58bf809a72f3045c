import BluetoothCore

/// How one consumer wants the controller to scan. Several consumers are combined (see
/// ``Scanner``): the controller scans actively if any of them asks for it, as often as the
/// most demanding one asks, on every PHY any of them names.
///
/// The defaults suit low-latency observers: passive (no scan requests go out; pass
/// `active: true` for scan responses), continuous (window equal to the interval, 100 ms),
/// LE 1M, no controller duplicate filtering (the host applies each consumer's
/// ``DuplicatePolicy``), extended commands when the controller has them.
public struct ScanParameters: Sendable, Hashable {
    /// Scan_Interval and Scan_Window range (Core Vol 4 Part E 7.8.10, 7.8.64): 0x0004 to
    /// 0x4000 units of 0.625 ms, that is 2.5 ms to 10.24 s.
    public static let unitRange: ClosedRange<UInt16> = 0x0004...0x4000

    /// Send scan requests and merge the scan responses into the advertisements.
    public let active: Bool
    /// Units of 0.625 ms.
    public let intervalUnits: UInt16
    /// Units of 0.625 ms; at most ``intervalUnits``.
    public let windowUnits: UInt16
    /// Also scan the primary channels on LE Coded (long range). Needs extended scanning
    /// and the LE Coded PHY feature.
    public let codedPHY: Bool
    /// Whether to scan on LE 1M; at least one PHY is always scanned.
    public let le1MPHY: Bool
    /// The controller's own filter (the Filter Accept List policies).
    public let filterPolicy: ScanningFilterPolicy
    public let ownAddressType: AddressType
    /// Let the controller drop repeated reports itself. Off by default: it hides RSSI
    /// changes and repeated sightings from every consumer. Used only when every
    /// consumer asks for it.
    public let controllerFiltersDuplicates: Bool
    /// nil: extended commands when the controller supports LE Set Extended Scan
    /// Parameters/Enable, else legacy. false forces legacy; true requires extended.
    public let useExtendedCommands: Bool?

    public init() {
        active = false
        intervalUnits = 160
        windowUnits = 160
        codedPHY = false
        le1MPHY = true
        filterPolicy = .basicUnfiltered
        ownAddressType = .public
        controllerFiltersDuplicates = false
        useExtendedCommands = nil
    }

    /// Throws when the interval or window is outside 2.5 ms...10.24 s, the window is longer
    /// than the interval, or no PHY is chosen. `window` nil means equal to `interval`
    /// (continuous scanning).
    public init(
        active: Bool = false,
        interval: Duration = .milliseconds(100),
        window: Duration? = nil,
        le1MPHY: Bool = true,
        codedPHY: Bool = false,
        filterPolicy: ScanningFilterPolicy = .basicUnfiltered,
        ownAddressType: AddressType = .public,
        controllerFiltersDuplicates: Bool = false,
        useExtendedCommands: Bool? = nil
    ) throws(ScanParameterError) {
        let intervalUnits = try Self.units(interval, field: "scan interval")
        let windowUnits = try window.map { (window) throws(ScanParameterError) in try Self.units(window, field: "scan window") } ?? intervalUnits
        guard windowUnits <= intervalUnits else {
            throw .windowLongerThanInterval(window: window ?? interval, interval: interval)
        }
        guard le1MPHY || codedPHY else { throw .noPHY }
        self.active = active
        self.intervalUnits = intervalUnits
        self.windowUnits = windowUnits
        self.le1MPHY = le1MPHY
        self.codedPHY = codedPHY
        self.filterPolicy = filterPolicy
        self.ownAddressType = ownAddressType
        self.controllerFiltersDuplicates = controllerFiltersDuplicates
        self.useExtendedCommands = useExtendedCommands
    }

    /// A Duration in 0.625 ms units, rounded to the nearest unit, checked against the range.
    static func units(_ duration: Duration, field: String) throws(ScanParameterError) -> UInt16 {
        let (seconds, attoseconds) = duration.components
        // 0.625 ms = 625_000_000_000_000 attoseconds; work in microseconds to stay in range.
        guard seconds >= 0, seconds < 100, attoseconds >= 0 else { throw .outOfRange(field: field, value: duration) }
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let units = (microseconds + 312) / 625
        guard units >= Int64(unitRange.lowerBound), units <= Int64(unitRange.upperBound) else {
            throw .outOfRange(field: field, value: duration)
        }
        return UInt16(units)
    }

    public var interval: Duration { .microseconds(Int(intervalUnits) * 625) }
    public var window: Duration { .microseconds(Int(windowUnits) * 625) }
}

/// Why scan parameters could not be built; the text says what range is allowed.
public enum ScanParameterError: Error, Sendable, Equatable, CustomStringConvertible {
    case outOfRange(field: String, value: Duration)
    case windowLongerThanInterval(window: Duration, interval: Duration)
    case noPHY

    public var description: String {
        switch self {
        case let .outOfRange(field, value):
            "\(field) \(value) is outside 2.5 ms...10.24 s (0x0004...0x4000 units of 0.625 ms): choose a value in that range"
        case let .windowLongerThanInterval(window, interval):
            "scan window \(window) is longer than the scan interval \(interval): the window must fit in the interval (equal means continuous scanning)"
        case .noPHY:
            "no PHY to scan on: enable LE 1M, LE Coded or both"
        }
    }
}
