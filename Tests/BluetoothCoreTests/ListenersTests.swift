import BluetoothCore
import Testing

/// `Listeners`: every stream gets every value; a reader that falls behind loses its oldest
/// beyond the bound, and the loss is counted; streams end on `finish()` or when dropped.
@Suite struct ListenersTests {
    @Test func everyStreamGetsEveryValueAndAFullOneDropsItsOldest() async {
        let listeners = Listeners<Int>(bufferLimit: 3)
        let first = listeners.stream()
        let second = listeners.stream()
        var dropped = 0
        for value in 1...5 { dropped += listeners.yield(value) }
        // Each of the two streams kept 3 of 5.
        #expect(dropped == 4)
        listeners.finish()
        var firstValues: [Int] = []
        for await value in first { firstValues.append(value) }
        var secondValues: [Int] = []
        for await value in second { secondValues.append(value) }
        #expect(firstValues == [3, 4, 5])
        #expect(secondValues == [3, 4, 5])
        // A stream made after finish() still works.
        let later = listeners.stream()
        #expect(listeners.yield(6) == 0)
        listeners.finish()
        var laterValues: [Int] = []
        for await value in later { laterValues.append(value) }
        #expect(laterValues == [6])
    }

    @Test func aStreamNobodyIteratesAnyMoreLeaves() async {
        let listeners = Listeners<Int>(bufferLimit: 1)
        do {
            let stream = listeners.stream()
            var iterator = stream.makeAsyncIterator()
            #expect(listeners.yield(1) == 0)
            #expect(await iterator.next() == 1)
        }
        // The stream and its iterator are gone: nothing is kept or counted for it.
        #expect(listeners.yield(2) == 0)
        #expect(listeners.yield(3) == 0)
    }
}
