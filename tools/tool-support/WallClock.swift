import BluetoothCore
import Glibc

/// Wall-clock time for output, without Foundation: CLOCK_REALTIME read through the vDSO,
/// and ISO 8601 text written as bytes.
public enum WallClock {
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, in nanoseconds: added to a monotonic
    /// timestamp (an advertisement's), it gives the wall-clock time of that moment. Read
    /// again for every batch, so a clock step shows within one batch.
    public static func offsetFromMonotonic() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let monotonic = MonotonicClock.nanoseconds()
        let realtime = Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        return realtime &- Int64(bitPattern: monotonic)
    }

    /// "2026-11-26T01:32:15.123456Z": nanoseconds since the Unix epoch, UTC, truncated to
    /// microseconds.
    public static func appendISO8601(_ nanoseconds: Int64, to out: inout [UInt8]) {
        var formatter = ISO8601Formatter()
        formatter.append(nanoseconds, to: &out)
    }

    /// Formats timestamps as ``WallClock/appendISO8601(_:to:)`` does, the date and time of
    /// day once per second: for a stream of them (a scan's JSON lines).
    public struct ISO8601Formatter {
        private var second = Int64.min
        /// "2026-11-26T01:32:15." for `second`.
        private var prefix: [UInt8] = []

        public init() {}

        public mutating func append(_ nanoseconds: Int64, to out: inout [UInt8]) {
            let microseconds = WallClock.floorDivide(nanoseconds, 1000)
            let seconds = WallClock.floorDivide(microseconds, 1_000_000)
            if seconds != second {
                second = seconds
                prefix.removeAll(keepingCapacity: true)
                let days = WallClock.floorDivide(seconds, 86_400)
                let secondOfDay = seconds - days * 86_400
                let (year, month, day) = WallClock.civil(fromDays: days)
                WallClock.digits(year, 4, &prefix)
                prefix.append(UInt8(ascii: "-"))
                WallClock.digits(month, 2, &prefix)
                prefix.append(UInt8(ascii: "-"))
                WallClock.digits(day, 2, &prefix)
                prefix.append(UInt8(ascii: "T"))
                WallClock.digits(secondOfDay / 3600, 2, &prefix)
                prefix.append(UInt8(ascii: ":"))
                WallClock.digits(secondOfDay / 60 % 60, 2, &prefix)
                prefix.append(UInt8(ascii: ":"))
                WallClock.digits(secondOfDay % 60, 2, &prefix)
                prefix.append(UInt8(ascii: "."))
            }
            out.append(contentsOf: prefix)
            WallClock.digits(microseconds - seconds * 1_000_000, 6, &out)
            out.append(UInt8(ascii: "Z"))
        }
    }

    /// Year, month, day of the proleptic Gregorian calendar for days since 1970-01-01
    /// (Howard Hinnant's days_from_civil inverse: exact for every Int64 day in range).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    /// `value` in at least `width` decimal digits, zero-padded (years past 9999 wider).
    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var value = UInt64(max(0, value))
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(value % 10))
            value /= 10
        } while value > 0 || out.count - start < width
        out[start...].reverse()
    }
}
