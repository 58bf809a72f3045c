import BluetoothCore
import Testing

@Suite struct MonotonicClockTests {
    /// The one conversion every deadline on the monotonic clock uses.
    @Test func durationsInNanosecondsNeverWrapADeadline() {
        #expect(MonotonicClock.nanoseconds(in: .zero) == 0)
        #expect(MonotonicClock.nanoseconds(in: .milliseconds(1_500)) == 1_500_000_000)
        #expect(MonotonicClock.nanoseconds(in: .nanoseconds(7)) == 7)
        #expect(MonotonicClock.nanoseconds(in: .seconds(-1)) == 0)
        #expect(MonotonicClock.nanoseconds(in: .nanoseconds(-1)) == 0)
        // Past 2^62 ns (146 years): capped, so now + it stays ahead of now.
        #expect(MonotonicClock.nanoseconds(in: .seconds(Int64.max)) == 1 << 62)
        #expect(MonotonicClock.nanoseconds(in: .seconds(4_611_686_018)) == 1 << 62)
        #expect(MonotonicClock.nanoseconds(in: .seconds(4_611_686_017)) == 4_611_686_017_000_000_000)
        let now = MonotonicClock.nanoseconds()
        #expect(now &+ MonotonicClock.nanoseconds(in: .seconds(Int64.max)) > now)
    }
}
