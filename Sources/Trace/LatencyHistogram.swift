/// Percentiles of round-trip times in fixed memory, whatever the number of samples: a
/// log-linear histogram (as HdrHistogram's), exact below 64 µs, then 32 buckets per power
/// of two, so a percentile is within 1/32 (3.1 %) of the true sample's value. Samples above
/// 2^36 µs (19 hours) count in the top bucket, negative ones (a clock set back) as 0.
public struct LatencyHistogram: Sendable, Equatable {
    static let subBucketBits = 5
    static let subBuckets = 1 << subBucketBits
    static let largestExponent = 36
    static let bucketCount = (largestExponent - subBucketBits + 2) * subBuckets

    /// Allocated at the first sample: a connection without ATT costs nothing.
    private var counts: [Int] = []
    public private(set) var count = 0
    public private(set) var minimum: Int64 = 0
    public private(set) var maximum: Int64 = 0

    public init() {}

    public mutating func add(_ microseconds: Int64) {
        let value = min(max(microseconds, 0), (1 << (Self.largestExponent + 1)) - 1)
        if counts.isEmpty { counts = [Int](repeating: 0, count: Self.bucketCount) }
        counts[Self.bucket(of: value)] += 1
        minimum = count == 0 ? value : min(minimum, value)
        maximum = count == 0 ? value : max(maximum, value)
        count += 1
    }

    /// The nearest-rank percentile (`fraction` 0.5 for p50, 0.99 for p99): the smallest
    /// sample with at least that fraction of samples at or below it, as its bucket's upper
    /// end (kept within the samples' minimum and maximum). Nil without samples.
    public func percentile(_ fraction: Double) -> Int64? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (bucket, inBucket) in counts.enumerated() where inBucket > 0 {
            seen += inBucket
            if seen >= rank { return min(max(Self.upperEnd(of: bucket), minimum), maximum) }
        }
        return maximum
    }

    static func bucket(of value: Int64) -> Int {
        guard value >= Int64(2 * subBuckets) else { return Int(value) }
        let exponent = Int64.bitWidth - value.leadingZeroBitCount - 1
        let shift = exponent - subBucketBits
        let mantissa = Int(value >> shift) & (subBuckets - 1)
        return (shift + 1) * subBuckets + mantissa
    }

    static func upperEnd(of bucket: Int) -> Int64 {
        guard bucket >= 2 * subBuckets else { return Int64(bucket) }
        let shift = bucket / subBuckets - 1
        let lower = Int64(subBuckets + bucket % subBuckets) << shift
        return lower + (1 << shift) - 1
    }
}
