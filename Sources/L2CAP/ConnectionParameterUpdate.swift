import BluetoothCore
import HCI

/// L2CAP_CONNECTION_PARAMETER_UPDATE_REQ (Core Vol 3 Part A 4.20): a peripheral asks the
/// central for new connection timing. Fields keep the specification's units so they map
/// one to one onto HCI LE Connection Update.
public struct ConnectionParameterUpdateRequest: SignalingCommandData, Hashable {
    public static let code = SignalingCode.connectionParameterUpdateRequest

    /// Units of 1.25 ms.
    public var intervalMin: UInt16
    /// Units of 1.25 ms.
    public var intervalMax: UInt16
    /// Connection events the peripheral may skip.
    public var peripheralLatency: UInt16
    /// Supervision timeout, units of 10 ms.
    public var timeoutMultiplier: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, peripheralLatency: UInt16, timeoutMultiplier: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.peripheralLatency = peripheralLatency
        self.timeoutMultiplier = timeoutMultiplier
    }

    /// 7.5 ms to 4 s.
    public static let intervalRange: ClosedRange<UInt16> = 6...3200
    /// Less than 500 connection events.
    public static let peripheralLatencyRange: ClosedRange<UInt16> = 0...499
    /// 100 ms to 32 s.
    public static let timeoutMultiplierRange: ClosedRange<UInt16> = 10...3200

    /// True when every field is in its range (4.20) and the supervision timeout exceeds
    /// (1 + latency) * Interval Max * 2, so the link survives the peripheral's skipped
    /// events (Vol 4 Part E 7.8.18 states the same rule for LE Connection Update).
    /// The same parameters as HCI LE Connection Update takes them (no connection event
    /// length preference).
    public var connectionParameters: LEConnectionParameters {
        LEConnectionParameters(
            connectionIntervalMin: intervalMin, connectionIntervalMax: intervalMax,
            maxLatency: peripheralLatency, supervisionTimeout: timeoutMultiplier)
    }

    public var isValid: Bool {
        guard Self.intervalRange.contains(intervalMin), Self.intervalRange.contains(intervalMax),
              intervalMin <= intervalMax,
              Self.peripheralLatencyRange.contains(peripheralLatency),
              Self.timeoutMultiplierRange.contains(timeoutMultiplier)
        else { return false }
        // In milliseconds: timeout * 10 > (1 + latency) * max * 1.25 * 2; times 4 / 10 keeps
        // it in integers.
        return Int(timeoutMultiplier) * 4 > (1 + Int(peripheralLatency)) * Int(intervalMax)
    }

    public init(decoding data: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(data)
        intervalMin = try reader.readUInt16()
        intervalMax = try reader.readUInt16()
        peripheralLatency = try reader.readUInt16()
        timeoutMultiplier = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(intervalMin)
        writer.write(intervalMax)
        writer.write(peripheralLatency)
        writer.write(timeoutMultiplier)
        return writer.bytes
    }
}

/// L2CAP_CONNECTION_PARAMETER_UPDATE_RSP (Core Vol 3 Part A 4.21).
public struct ConnectionParameterUpdateResponse: SignalingCommandData {
    public static let code = SignalingCode.connectionParameterUpdateResponse

    public struct Result: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let accepted = Result(rawValue: 0x0000)
        public static let rejected = Result(rawValue: 0x0001)
    }

    public var result: Result

    public init(result: Result) { self.result = result }

    public init(decoding data: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(data)
        result = Result(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 2)
        writer.write(result.rawValue)
        return writer.bytes
    }
}
