// The C library's exp and pow: the standard library has no transcendental functions, and
// Foundation is not allowed in core modules.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum BeaconMath {
    static func exponential(_ x: Double) -> Double { exp(x) }
    static func powerOfTen(_ x: Double) -> Double { pow(10, x) }

    /// The median of a non-empty list; the mean of the middle two for an even count.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
