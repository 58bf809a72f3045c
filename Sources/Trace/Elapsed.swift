/// Microseconds from one capture time to another. A capture's times are whatever its writer
/// (or an attacker) put there, so the difference saturates instead of trapping.
public func elapsed(from start: Int64, to end: Int64) -> Int64 {
    let (difference, overflow) = end.subtractingReportingOverflow(start)
    guard overflow else { return difference }
    return end > start ? .max : .min
}
