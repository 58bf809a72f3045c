import BluetoothCore
@testable import HCI
import HCITransport
import Glibc
import Logging
import Synchronization
import Testing
import TestSupport

/// The AsyncSequence consumer: bounded, batched, and never losing an advertisement without
/// counting it for the consumer that lost it.
@Suite struct AdvertisementStreamTests {
    /// 1,000 distinct advertisements, each its own report event.
    static func numbered(_ count: Int) -> [LEMetaEvent] {
        (0..<count).map { legacy(.advNonconnInd, data: [0x03, 0xFF, UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)]) }
    }

    static func number(_ advertisement: Advertisement) -> Int {
        let bytes = advertisement.advertisingData.bytes
        return Int(bytes[2]) | Int(bytes[3]) << 8
    }

    @Test func aConsumerThatFallsBehindIsToldExactlyWhatItLost() async throws {
        let rig = try await ScanRig()
        let stream = try await rig.scanner.scan(bufferLimit: 100)
        // Nobody reads while the controller sends 1,000.
        await rig.inject(Self.numbered(1_000))
        await stream.stop()
        var received: [Int] = []
        var iterator = stream.makeAsyncIterator()
        while let advertisement = try await iterator.next() { received.append(Self.number(advertisement)) }
        // The first 100 waited, in order; everything after them was counted, not lost.
        #expect(received == Array(0..<100))
        #expect(iterator.droppedCount == 900)
        #expect(stream.droppedCount == 900)
        #expect(received.count + stream.droppedCount == 1_000)
        #expect(rig.scanner.statistics.streamBufferDrops == 900)
    }

    @Test func dropsAreCountedForTheConsumerThatFellBehindOnly() async throws {
        let rig = try await ScanRig()
        let small = try await rig.scanner.scan(bufferLimit: 10)
        let large = try await rig.scanner.scan(bufferLimit: 1_000)
        let collector = Collector()
        let session = try await rig.scanner.scan(onAdvertisement: collector.handler)
        await rig.inject(Self.numbered(300))
        await small.stop()
        await large.stop()
        await session.stop()
        var smallCount = 0
        for try await _ in small { smallCount += 1 }
        var largeCount = 0
        for try await _ in large { largeCount += 1 }
        #expect((smallCount, small.droppedCount) == (10, 290))
        #expect((largeCount, large.droppedCount) == (300, 0))
        #expect(collector.advertisements.count == 300)
        #expect(rig.scanner.statistics.streamBufferDrops == 290)
    }

    @Test func whatWaitsComesOutAsOneBatchWithTheDropsAfterIt() async throws {
        let rig = try await ScanRig()
        let stream = try await rig.scanner.scan(bufferLimit: 50)
        await rig.inject(Self.numbered(80))
        var iterator = stream.makeAsyncIterator()
        let first = try #require(try await iterator.nextBatch())
        #expect(first.map(Self.number) == Array(0..<50))
        #expect(iterator.droppedCount == 30)
        // Room again: the next ones arrive and come out after the gap.
        await rig.inject(Array(Self.numbered(83).suffix(3)))
        let second = try #require(try await iterator.nextBatch())
        #expect(second.map(Self.number) == [80, 81, 82])
        #expect(iterator.droppedCount == 30)
        await stream.stop()
        #expect(try await iterator.nextBatch() == nil)
    }

    /// A consumer that keeps up is woken once for the reader's whole chunk, not for each
    /// advertisement in it.
    @Test func aWaitingConsumerIsWokenOnceTheReaderHasHandledItsChunk() async throws {
        let buffer = AdvertisementBuffer(limit: 100, totalDrops: DropCounter(), logger: Logger(label: "test"))
        let taken = Mutex<Int?>(nil)
        let consumer = Task {
            let batch = try await buffer.take(returning: [])
            taken.withLock { $0 = batch?.batch.count }
        }
        // Long enough for the consumer to be waiting, even on a loaded machine.
        try await Task.sleep(for: .seconds(1))
        let duringChunk = Mutex<Int?>(nil)
        let advertisements = (1...3).map { Advertisement(address: DeviceAddress(BluetoothAddress(UInt64($0)), type: .public), eventType: [.legacy]) }
        let reader = try PosixThread.start {
            ReaderChunk.begin()
            for advertisement in advertisements { buffer.append(advertisement) }
            var pause = timespec(tv_sec: 0, tv_nsec: 200_000_000)
            nanosleep(&pause, nil)
            duringChunk.withLock { $0 = taken.withLock { $0 } }
            ReaderChunk.end()
        }.get()
        pthread_join(reader, nil)
        try await consumer.value
        #expect(duringChunk.withLock { $0 } == nil)
        #expect(taken.withLock { $0 } == 3)
    }

    @Test func wakeGivesControlBackInAQuietScan() async throws {
        let rig = try await ScanRig()
        let stream = try await rig.scanner.scan()
        let waiting = Task {
            var iterator = stream.makeAsyncIterator()
            return try await iterator.nextBatch()?.count
        }
        stream.wake()
        #expect(try await waiting.value == 0)
        await stream.stop()
    }

    @Test func cancellingTheReadingTaskEndsTheConsumer() async throws {
        let rig = try await ScanRig()
        let stream = rig.scanner.advertisements()
        try await waitUntil { rig.scanCommands.count == 2 }
        let reading = Task {
            for try await _ in stream {}
        }
        reading.cancel()
        try await reading.value
        // The last consumer gone, scanning stops.
        try await waitUntil { rig.scanCommands.count == 3 }
        #expect(rig.scanCommands.last == "ext disable dup 0")
    }
}
