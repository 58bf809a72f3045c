#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CLOCK_MONOTONIC in nanoseconds, read through the vDSO (no system call): the clock of
/// advertisement timestamps and of every deadline in BareBLE, comparable with any other
/// monotonic reading in the same boot.
public enum MonotonicClock {
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

extension MonotonicClock {
    /// `duration` in nanoseconds, for deadlines on this clock: 0 when negative, and at most
    /// 2^62 (about 146 years), so a reading plus it never wraps.
    public static func nanoseconds(in duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let cap: UInt64 = 1 << 62
        guard seconds < Int64(cap / 1_000_000_000) else { return cap }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
