import BluetoothCore

/// What a central asks for when it creates a connection: how to look for the peer, from
/// which address, on which PHYs, and the timing of the connection.
///
/// Values stay in the specification's units (see ``LEConnectionParameters``); ``default``
/// is chosen for this stack's users (battery peripherals, sensors, phones):
/// - connection interval 30 - 50 ms: quick enough for GATT discovery and notifications,
///   and inside what iOS and Android peripherals accept without renegotiating;
/// - peripheral latency 0: the peripheral answers every event, so a GATT request never
///   waits a skipped event;
/// - supervision timeout 4 s: a link is declared lost after 4 s of silence, well above the
///   specification's floor ((1 + latency) x interval x 2 = 100 ms) so short fades survive;
/// - scan interval = window = 60 ms: the initiator listens continuously, so it connects on
///   the peer's next advertisement.
public struct ConnectionParameters: Hashable, Sendable {
    /// The address the connection is made from.
    public enum OwnAddress: Hashable, Sendable {
        /// The controller's public address.
        case `public`
        /// This random address, set with LE Set Random Address first (legacy controllers
        /// refuse that while they advertise or scan).
        case random(BluetoothAddress)
        /// The random address already set on the controller (by an ``Advertiser`` or the
        /// caller).
        case currentRandom

        var addressType: AddressType { self == .public ? .public : .random }
    }

    /// Connection timing asked for (the controller may choose within the range).
    public var connection: LEConnectionParameters
    /// LE_Scan_Interval of the initiator, units of 0.625 ms (0x0004 ... 0x4000).
    public var scanInterval: UInt16
    /// LE_Scan_Window, units of 0.625 ms, at most ``scanInterval``.
    public var scanWindow: UInt16
    public var ownAddress: OwnAddress
    /// PHYs to initiate on with LE Extended Create Connection. LE 1M is always used (the
    /// peer must be found on the primary channels); LE 2M and LE Coded are added when asked
    /// for here *and* the controller has the feature, silently left out otherwise. Legacy
    /// controllers initiate on LE 1M only.
    public var initiatingPHYs: LEPHYMask

    public init(
        connection: LEConnectionParameters = ConnectionParameters.defaultTiming,
        scanInterval: UInt16 = 0x0060,
        scanWindow: UInt16 = 0x0060,
        ownAddress: OwnAddress = .public,
        initiatingPHYs: LEPHYMask = .le1M
    ) {
        self.connection = connection
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.ownAddress = ownAddress
        self.initiatingPHYs = initiatingPHYs
    }

    /// Interval 30 - 50 ms, latency 0, supervision timeout 4 s (see the type's notes).
    public static let defaultTiming = LEConnectionParameters(
        connectionIntervalMin: 24, connectionIntervalMax: 40, maxLatency: 0, supervisionTimeout: 400
    )

    public static let `default` = ConnectionParameters()

    func validate() throws(ConnectionError) {
        guard (0x0004...0x4000).contains(scanInterval), (0x0004...0x4000).contains(scanWindow), scanWindow <= scanInterval else {
            throw .invalidParameters("scan interval \(scanInterval) and window \(scanWindow) (units of 0.625 ms) must be 4 ... 16384 with the window at most the interval")
        }
        try connection.validateForConnection()
    }
}

/// Requests made right after a connection comes up, before ``Connector/connect(to:parameters:options:timeout:)``
/// returns. Both are requests to the link layer: the peer may refuse, and the connection is
/// returned either way with what is in effect (``Connection/dataLength``, ``Connection/phy``).
public struct ConnectionOptions: Hashable, Sendable {
    /// Ask for this many payload octets per link-layer packet (27 ... 251) with LE Set Data
    /// Length; nil leaves the default (27).
    public var dataLength: UInt16?
    /// Ask to move to LE 2M in both directions with LE Set PHY.
    public var prefer2MPHY: Bool

    public init(dataLength: UInt16? = nil, prefer2MPHY: Bool = false) {
        self.dataLength = dataLength
        self.prefer2MPHY = prefer2MPHY
    }

    public static let none = ConnectionOptions()
}

extension LEConnectionParameters {
    /// The ranges of Core Vol 4 Part E 7.8.12 and 7.8.18, checked before a command goes
    /// out so the error names the field instead of the controller's bare 0x12.
    func validateForConnection() throws(ConnectionError) {
        guard (0x0006...0x0C80).contains(connectionIntervalMin), (0x0006...0x0C80).contains(connectionIntervalMax),
              connectionIntervalMin <= connectionIntervalMax else {
            throw .invalidParameters("connection interval \(connectionIntervalMinMilliseconds) ... \(connectionIntervalMaxMilliseconds) ms must lie within 7.5 ms ... 4 s, minimum first")
        }
        guard maxLatency <= 0x01F3 else {
            throw .invalidParameters("peripheral latency \(maxLatency) is over the maximum 499 events")
        }
        guard (0x000A...0x0C80).contains(supervisionTimeout) else {
            throw .invalidParameters("supervision timeout \(supervisionTimeoutMilliseconds) ms must lie within 100 ms ... 32 s")
        }
        // Timeout x 10 ms > (1 + latency) x interval max x 1.25 ms x 2, in integer units.
        guard UInt32(supervisionTimeout) * 4 > (1 + UInt32(maxLatency)) * UInt32(connectionIntervalMax) else {
            throw .invalidParameters("supervision timeout \(supervisionTimeoutMilliseconds) ms must exceed (1 + latency) x maximum interval x 2 = \(Double(1 + Int(maxLatency)) * connectionIntervalMaxMilliseconds * 2) ms: lengthen it or lower the latency")
        }
        guard minCELength <= maxCELength else {
            throw .invalidParameters("minimum connection event length \(minCELength) is above the maximum \(maxCELength)")
        }
    }
}
