import Testing
import TestSupport

/// The long loops' wrapper really leaves the tasks' pool: the body runs on the loops' own
/// queue, also after it yields.
@Suite struct OffThePoolTests {
    @Test func theBodyRunsOnTheLongLoopsQueueAcrossYields() async {
        #expect(!isOffThePool)
        let places = await offThePool {
            var places: [Bool] = []
            for iteration in 0..<3 {
                await yieldPeriodically(every: 1, iteration: iteration)
                places.append(isOffThePool)
            }
            return places
        }
        #expect(places == [true, true, true])
    }
}
