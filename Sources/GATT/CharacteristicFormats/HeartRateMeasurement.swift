import BluetoothCore

/// The Heart Rate Measurement characteristic (0x2A37, Heart Rate Service 3.1): a flags
/// byte, the heart rate, and optionally the energy expended and RR intervals.
public struct HeartRateMeasurement: Hashable, Sendable, CustomStringConvertible {
    /// The flags byte's bits.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Set: the heart rate is a UInt16; clear: a UInt8.
        public static let heartRateIsUInt16 = Flags(rawValue: 0x01)
        /// Meaningful only with ``sensorContactSupported``.
        public static let sensorContactDetected = Flags(rawValue: 0x02)
        public static let sensorContactSupported = Flags(rawValue: 0x04)
        public static let energyExpendedPresent = Flags(rawValue: 0x08)
        public static let rrIntervalsPresent = Flags(rawValue: 0x10)
    }

    /// What the sensor says about skin contact (flags bits 1 and 2).
    public enum SensorContact: Hashable, Sendable {
        case notSupported, notDetected, detected
    }

    public var flags: Flags
    /// Beats per minute.
    public var heartRate: UInt16
    /// Kilojoules since the last reset, when present.
    public var energyExpended: UInt16?
    /// RR intervals in units of 1/1024 s, oldest first, as sent.
    public var rrIntervals: [UInt16]

    public init(flags: Flags, heartRate: UInt16, energyExpended: UInt16? = nil, rrIntervals: [UInt16] = []) {
        self.flags = flags
        self.heartRate = heartRate
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    /// Decodes the value. The flags decide the layout, so a field the flags announce but the
    /// bytes lack is ``DecodeError/truncated(needed:available:)``. Everything after the fixed
    /// fields is RR intervals when bit 4 is set; an odd byte left over there, or any byte
    /// left over without bit 4, is ``DecodeError/trailingBytes(count:)``. The reserved flag
    /// bits 5 to 7 are kept and ignored.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let flags = Flags(rawValue: try reader.readUInt8())
        let heartRate = flags.contains(.heartRateIsUInt16) ? try reader.readUInt16() : UInt16(try reader.readUInt8())
        let energy = flags.contains(.energyExpendedPresent) ? try reader.readUInt16() : nil
        var intervals: [UInt16] = []
        if flags.contains(.rrIntervalsPresent) {
            // Bounded by the input already in hand, not by a field.
            intervals.reserveCapacity(reader.remaining / 2)
            while reader.remaining >= 2 { intervals.append(try reader.readUInt16()) }
        }
        try reader.expectEnd()
        self.init(flags: flags, heartRate: heartRate, energyExpended: energy, rrIntervals: intervals)
    }

    /// The value as a sensor sends it, laid out by ``flags``: a field the flags announce is
    /// written (energy expended as 0 when nil), one they do not is left out.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 4 + 2 * rrIntervals.count)
        writer.write(flags.rawValue)
        if flags.contains(.heartRateIsUInt16) { writer.write(heartRate) } else { writer.write(UInt8(truncatingIfNeeded: heartRate)) }
        if flags.contains(.energyExpendedPresent) { writer.write(energyExpended ?? 0) }
        if flags.contains(.rrIntervalsPresent) { for interval in rrIntervals { writer.write(interval) } }
        return writer.bytes
    }

    public var sensorContact: SensorContact {
        guard flags.contains(.sensorContactSupported) else { return .notSupported }
        return flags.contains(.sensorContactDetected) ? .detected : .notDetected
    }

    /// The RR intervals in milliseconds (x 1000 / 1024).
    public var rrIntervalsMilliseconds: [Double] {
        rrIntervals.map { Double($0) * 1000 / 1024 }
    }

    /// "72 bpm, contact detected, energy 10 kJ, RR 750 ms, 1000 ms".
    public var description: String {
        var parts = ["\(heartRate) bpm"]
        switch sensorContact {
        case .notSupported: break
        case .notDetected: parts.append("no contact")
        case .detected: parts.append("contact detected")
        }
        if let energyExpended { parts.append("energy \(energyExpended) kJ") }
        if !rrIntervals.isEmpty {
            parts.append("RR " + rrIntervals.map { millisecondsText(fromUnitsOf1024th: $0) + " ms" }.joined(separator: ", "))
        }
        return parts.joined(separator: ", ")
    }
}
