/// The advertisements one consumer of a ``Scanner`` receives, as an `AsyncSequence`.
///
/// Between the transport's reader thread and the consumer is one bounded buffer
/// (``Scanner/streamBufferLimit`` unless the consumer chose its own). The iterator takes
/// whatever waits in one batch and hands it out from there, so a busy stream costs about
/// what the callback costs, not a task switch per advertisement. When the consumer falls
/// so far behind that the buffer is full, arriving advertisements are dropped and counted
/// in ``droppedCount`` (and, summed over all streams, in
/// ``ScanStatistics/streamBufferDrops``): nothing is lost without a count.
///
/// Scanning for this consumer goes on until ``stop()``, until the task iterating it is
/// cancelled, or until the last copy of the stream and its iterator is released. A failure
/// (to start, or the transport closing) ends the iteration with the ``HCIError``, after
/// the advertisements received before it.
public struct AdvertisementStream: AsyncSequence, Sendable {
    public typealias Element = Advertisement

    let handle: Handle

    /// Advertisements this consumer lost because its buffer was full.
    public var droppedCount: Int { handle.buffer.dropped }

    /// Stops scanning for this consumer: advertisements held for a scan response are put in
    /// the buffer first, and when this was the last consumer the controller's scanning is
    /// disabled before this returns. The iterator then hands out what is still buffered
    /// and ends.
    public func stop() async { await handle.stop() }

    /// Makes a pending ``Iterator/nextBatch()`` return at once (with an empty batch when
    /// nothing waits): how a tool that also serves timers or Ctrl-C gets control back in
    /// a quiet scan.
    public func wake() { handle.buffer.wake() }

    public func makeAsyncIterator() -> Iterator { Iterator(handle: handle) }

    public struct Iterator: AsyncIteratorProtocol {
        let handle: Handle
        private var batch: [Advertisement] = []
        private var index = 0
        /// Advertisements dropped before the end of the batch last taken (every one of them
        /// arrived after that batch's last advertisement); once the iteration ended, all of
        /// them.
        public private(set) var droppedCount = 0

        init(handle: Handle) { self.handle = handle }

        public mutating func next() async throws -> Advertisement? {
            while index == batch.count {
                guard try await refill() else { return nil }
            }
            defer { index += 1 }
            return batch[index]
        }

        /// Everything waiting, at once (what ``next()`` has not handed out yet first); an
        /// empty batch after ``AdvertisementStream/wake()``; nil at the end.
        public mutating func nextBatch() async throws -> ArraySlice<Advertisement>? {
            if index == batch.count {
                guard try await refill() else { return nil }
            }
            defer { index = batch.count }
            return batch[index...]
        }

        private mutating func refill() async throws -> Bool {
            batch.removeAll(keepingCapacity: true)
            index = 0
            let spare = batch
            batch = []
            let taken: (batch: [Advertisement], dropped: Int)?
            do {
                taken = try await handle.buffer.take(returning: spare)
            } catch {
                // Drops after the last batch are part of how the stream ended.
                droppedCount = handle.buffer.dropped
                throw error
            }
            guard let taken else {
                droppedCount = handle.buffer.dropped
                // A cancelled iteration ends the consumer, as leaving the loop would.
                if Task.isCancelled { handle.endNow() }
                return false
            }
            batch = taken.batch
            droppedCount = taken.dropped
            return true
        }
    }

    /// Ends the consumer when the last copy of the stream and its iterators goes. The
    /// scanner holds the buffer, never the handle.
    final class Handle: Sendable {
        let buffer: AdvertisementBuffer
        private let end: @Sendable () -> Void
        private let stopper: @Sendable () async -> Void

        init(buffer: AdvertisementBuffer, end: @escaping @Sendable () -> Void, stop: @escaping @Sendable () async -> Void) {
            self.buffer = buffer
            self.end = end
            stopper = stop
        }

        func stop() async { await stopper() }

        func endNow() { end() }

        deinit { end() }
    }
}
