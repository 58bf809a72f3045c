import BluetoothCore

/// Connection_Interval is in units of 1.25 ms.
func connectionIntervalMilliseconds(_ units: UInt16) -> Double { Double(units) * 1.25 }
/// Supervision_Timeout is in units of 10 ms.
func supervisionTimeoutMilliseconds(_ units: UInt16) -> Int { Int(units) * 10 }
/// Min_CE_Length and Max_CE_Length are in units of 0.625 ms.
func connectionEventLengthMilliseconds(_ units: UInt16) -> Double { Double(units) * 0.625 }

/// The timing a host asks for when it creates or re-times an LE connection: the same six
/// parameters, in the same order, in LE Create Connection (Core Vol 4 Part E 7.8.12), each
/// PHY's entry of LE Extended Create Connection (7.8.66), LE Connection Update (7.8.18) and
/// LE Remote Connection Parameter Request Reply (7.8.31, which calls them Interval_Min,
/// Interval_Max, Max_Latency, Timeout, Min_CE_Length, Max_CE_Length).
///
/// Values stay in the specification's units so a command round-trips exactly; the
/// millisecond properties are for people. Ranges are not checked here: the controller
/// answers values outside them with Invalid HCI Command Parameters, and which ranges apply
/// depends on the controller's version.
public struct LEConnectionParameters: Hashable, Sendable {
    /// Connection_Interval_Min, units of 1.25 ms (0x0006 = 7.5 ms ... 0x0C80 = 4 s).
    public var connectionIntervalMin: UInt16
    /// Connection_Interval_Max, units of 1.25 ms; at least ``connectionIntervalMin``.
    public var connectionIntervalMax: UInt16
    /// Max_Latency: how many connection events the peripheral may skip (0 ... 0x01F3).
    public var maxLatency: UInt16
    /// Supervision_Timeout, units of 10 ms (0x000A = 100 ms ... 0x0C80 = 32 s). Must exceed
    /// (1 + maxLatency) x connectionIntervalMax x 2, or the controller refuses it.
    public var supervisionTimeout: UInt16
    /// Min_CE_Length, units of 0.625 ms: a hint for how long each connection event lasts.
    public var minCELength: UInt16
    /// Max_CE_Length, units of 0.625 ms.
    public var maxCELength: UInt16

    /// Connection event lengths default to zero, "no preference" in practice.
    public init(
        connectionIntervalMin: UInt16,
        connectionIntervalMax: UInt16,
        maxLatency: UInt16,
        supervisionTimeout: UInt16,
        minCELength: UInt16 = 0,
        maxCELength: UInt16 = 0
    ) {
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public var connectionIntervalMinMilliseconds: Double { HCI.connectionIntervalMilliseconds(connectionIntervalMin) }
    public var connectionIntervalMaxMilliseconds: Double { HCI.connectionIntervalMilliseconds(connectionIntervalMax) }
    public var supervisionTimeoutMilliseconds: Int { HCI.supervisionTimeoutMilliseconds(supervisionTimeout) }
    public var minCELengthMilliseconds: Double { connectionEventLengthMilliseconds(minCELength) }
    public var maxCELengthMilliseconds: Double { connectionEventLengthMilliseconds(maxCELength) }

    /// Reads the six two-octet fields; the commands around them check for trailing bytes.
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionIntervalMin = try reader.readUInt16()
        connectionIntervalMax = try reader.readUInt16()
        maxLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        minCELength = try reader.readUInt16()
        maxCELength = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(connectionIntervalMin)
        writer.write(connectionIntervalMax)
        writer.write(maxLatency)
        writer.write(supervisionTimeout)
        writer.write(minCELength)
        writer.write(maxCELength)
    }
}
