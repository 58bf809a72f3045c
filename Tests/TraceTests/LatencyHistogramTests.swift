import Testing
import TestSupport
import Trace

/// The fixed-memory percentile structure `stats` uses for ATT round trips.
@Suite struct LatencyHistogramTests {
    @Test func smallValuesAreExactAndTheRankIsTheNearestOne() {
        var histogram = LatencyHistogram()
        #expect(histogram.percentile(0.5) == nil)
        for value: Int64 in [5, 1, 4, 2, 3] { histogram.add(value) }
        #expect(histogram.count == 5 && histogram.minimum == 1 && histogram.maximum == 5)
        #expect(histogram.percentile(0.5) == 3)
        #expect(histogram.percentile(0.99) == 5)
        #expect(histogram.percentile(0) == 1)
        #expect(histogram.percentile(0.2) == 1 && histogram.percentile(0.21) == 2)
    }

    /// Against the sorted samples (the unbounded way): every percentile within 1/32 above
    /// the true nearest-rank value, never below it, over seeded values from 0 to 2^36 µs.
    @Test func percentilesStayWithinTheBucketError() {
        var random = SeededRandom(seed: 15)
        for round in 0..<20 {
            var histogram = LatencyHistogram()
            var samples: [Int64] = []
            let top = Int64(1) << Int64(4 + round)
            for _ in 0..<(1 + round * 97) {
                let value = Int64.random(in: 0...top, using: &random)
                samples.append(value)
                histogram.add(value)
            }
            samples.sort()
            for fraction in [0.01, 0.25, 0.5, 0.9, 0.99, 1.0] {
                let rank = max(1, Int((fraction * Double(samples.count)).rounded(.up)))
                let exact = samples[rank - 1]
                let found = histogram.percentile(fraction)!
                #expect(found >= exact && Double(found - exact) <= Double(exact) / 32 + 1, "round \(round) p\(fraction): \(found) for \(exact)")
            }
        }
    }

    /// A clock set back, a wait of days, a million samples: no trap, no growth.
    @Test func outOfRangeSamplesAreClampedNotTrapped() {
        var histogram = LatencyHistogram()
        histogram.add(-5)
        histogram.add(.max)
        histogram.add(.min)
        #expect(histogram.count == 3 && histogram.minimum == 0)
        #expect(histogram.percentile(1)! == (Int64(1) << 37) - 1)
        for value in 0..<1_000_000 { histogram.add(Int64(value)) }
        #expect(histogram.count == 1_000_003)
    }
}
