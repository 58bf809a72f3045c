import Testing
@testable import ToolSupport

/// What the tools write: wall-clock times in ISO 8601 (their JSON: BluetoothCoreTests.JSONTests).
@Suite struct ToolOutput {
    func iso8601(_ nanoseconds: Int64) -> String {
        var bytes: [UInt8] = []
        WallClock.appendISO8601(nanoseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func wallClockTimesAreISO8601UTCWithMicroseconds() {
        #expect(iso8601(0) == "1970-01-01T00:00:00.000000Z")
        #expect(iso8601(951_782_400_123_456_789) == "2000-02-29T00:00:00.123456Z")
        #expect(iso8601(-1) == "1969-12-31T23:59:59.999999Z")
        #expect(iso8601(1_795_656_735_000_001_000) == "2026-11-26T01:32:15.000001Z")
        #expect(iso8601(4_102_444_800_000_000_000) == "2100-01-01T00:00:00.000000Z")
    }

    @Test func aFormatterReusedAcrossSecondsAndDaysWritesWhatEachCallWould() {
        // The formatter keeps the date and time of day of the last second: moving forward,
        // back, and over midnight and a year end must still give each time's own text.
        var formatter = WallClock.ISO8601Formatter()
        let times: [Int64] = [
            1_795_656_735_000_001_000, 1_795_656_735_999_999_999, 1_795_656_736_000_000_000,
            1_795_656_734_500_000_000, 1_798_761_599_999_999_000, 1_798_761_600_000_000_000, -1, 0,
        ]
        for time in times {
            var bytes: [UInt8] = []
            formatter.append(time, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == iso8601(time))
        }
        var bytes: [UInt8] = []
        formatter.append(1_798_761_600_000_000_000, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "2027-01-01T00:00:00.000000Z")
    }

    @Test func everyDayOfFourHundredYearsRoundTrips() async {
        // The Gregorian cycle: leap days of centuries included (2000 is one, 2100 is not).
        var previous = (year: Int64(1969), month: Int64(12), day: Int64(31))
        for days in Int64(0)..<146_097 {
            let date = WallClock.civil(fromDays: days)
            let nextDay = previous.day + 1
            let expected: (Int64, Int64, Int64) = nextDay <= Self.length(previous.year, previous.month)
                ? (previous.year, previous.month, nextDay)
                : previous.month == 12 ? (previous.year + 1, 1, 1) : (previous.year, previous.month + 1, 1)
            #expect(date == expected, "day \(days)")
            if date != expected { return }
            previous = date
            if days % 10_000 == 0 { await Task.yield() }
        }
    }

    static func length(_ year: Int64, _ month: Int64) -> Int64 {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][Int(month - 1)]
    }
}
