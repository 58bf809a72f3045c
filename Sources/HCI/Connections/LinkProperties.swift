import BluetoothCore

/// The timing a connection runs with, as LE (Enhanced) Connection Complete and LE
/// Connection Update Complete report it (specification units; milliseconds for people).
public struct ConnectionTiming: Hashable, Sendable, CustomStringConvertible {
    /// Connection_Interval, units of 1.25 ms.
    public var connectionInterval: UInt16
    /// Peripheral_Latency: connection events the peripheral may skip.
    public var peripheralLatency: UInt16
    /// Supervision_Timeout, units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    public var connectionIntervalMilliseconds: Double { HCI.connectionIntervalMilliseconds(connectionInterval) }
    public var supervisionTimeoutMilliseconds: Int { HCI.supervisionTimeoutMilliseconds(supervisionTimeout) }

    public var description: String {
        "interval \(connectionIntervalMilliseconds) ms, latency \(peripheralLatency), supervision timeout \(supervisionTimeoutMilliseconds) ms"
    }
}

/// The PHY of each direction of a connection.
public struct ConnectionPHY: Hashable, Sendable, CustomStringConvertible {
    public var tx: LEPHY
    public var rx: LEPHY

    public init(tx: LEPHY, rx: LEPHY) {
        self.tx = tx
        self.rx = rx
    }

    /// Every connection starts on the PHY it was initiated on; LE 1M unless told otherwise.
    public static let le1M = ConnectionPHY(tx: .le1M, rx: .le1M)

    public var description: String { tx == rx ? tx.description : "TX \(tx), RX \(rx)" }
}

/// The largest link-layer payloads of a connection (LE Data Length Change).
public struct DataLength: Hashable, Sendable, CustomStringConvertible {
    public var maxTxOctets: UInt16
    /// Microseconds.
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    /// Microseconds.
    public var maxRxTime: UInt16

    public init(maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }

    /// What every connection starts with (Core Vol 6 Part B 4.5.10): 27 octets, 328 us.
    public static let initial = DataLength(maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328)

    /// The time a packet of `octets` payload octets takes on LE 1M: 14 octets of header,
    /// MIC and CRC around it, 8 us per octet (Vol 6 Part B 4.5.10). 2120 us for 251.
    static func transmitTime(octets: UInt16) -> UInt16 { (octets + 14) * 8 }

    public var description: String { "TX \(maxTxOctets) octets / \(maxTxTime) us, RX \(maxRxOctets) octets / \(maxRxTime) us" }
}
