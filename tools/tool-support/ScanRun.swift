import BluetoothCore
import HCI
import HCITransport
import Synchronization

/// What a scanning subcommand reacts to.
public enum ScanRunEvent: Sendable {
    case advertisement(Advertisement)
    /// Everything received so far has been handled: the moment to write buffered output.
    /// `dropped` is how many advertisements the scan has lost so far because this consumer
    /// was behind (all of them arrived after the advertisements handled before this).
    case caughtUp(dropped: Int)
    /// A `tickEvery` period has passed; the monotonic time in nanoseconds. Lets a live table
    /// redraw its ages, or a ranger close a period, while nothing arrives.
    case tick(UInt64)
}

/// The scan every scanning subcommand runs (central's scan; beacon's range, monitor,
/// calibrate): open the transport, power on, scan with `filter` until Ctrl-C, SIGTERM,
/// `duration` or the transport closing, and stop scanning on the controller before
/// returning, so the process never exits with the controller still scanning.
///
/// Advertisements come from the scanner's stream in batches (everything that arrived while
/// the previous batch was handled), so the tool pays one task wake-up per batch, not per
/// advertisement, and writes its output once per batch. The stream's buffer is the one
/// place a slow tool loses advertisements, and it counts them.
public enum ScanRun {
    /// Advertisements waiting for the tool at most: at 100,000 a second, 160 ms of output
    /// stalled (a terminal scrolling, a pipe reader paging in) before anything is dropped;
    /// a few megabytes of memory at most.
    public static let bufferLimit = 16_384

    /// `handle` runs for each event, in order; an error it throws ends the scan and is
    /// rethrown. `stopped` runs once scanning is off on the controller and every
    /// advertisement received was handled, before any error is thrown (a table gets its
    /// last draw even when scanning failed). Setup failures throw before either runs.
    public static func run(
        options: TransportOptions,
        filter: ScanFilter,
        active: Bool,
        useExtendedCommands: Bool? = nil,
        readerWait: ReaderWait = .blocking,
        duration: Double?,
        tickEvery period: Duration?,
        handle: (ScanRunEvent) throws -> Void,
        stopped: () -> Void = {}
    ) async throws {
        let parameters: ScanParameters
        do {
            parameters = try ScanParameters(active: active, useExtendedCommands: useExtendedCommands)
        } catch {
            throw ToolError(error.description)
        }
        let controller = try await options.openPoweredController(readerWait: readerWait)
        defer { controller.close() }

        let scanner = Scanner(controller: controller)
        let stream: AdvertisementStream
        do {
            stream = try await scanner.scan(matching: filter, parameters: parameters, bufferLimit: bufferLimit)
        } catch {
            throw ToolError("cannot start scanning: \(error)")
        }
        let flags = Flags()
        // Ctrl-C, SIGTERM or `duration` end the loop below instead of the process, so
        // scanning is stopped on the controller before exit.
        let stop = StopRequest(after: duration) {
            flags.stop.store(true, ordering: .releasing)
            stream.wake()
        }
        defer { stop.cancel() }
        let ticker: Task<Void, Never>? = period.map { period in
            Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: period) } catch { return }
                    flags.tick.store(true, ordering: .releasing)
                    stream.wake()
                }
            }
        }
        defer { ticker?.cancel() }

        var failure: (any Error)?
        /// `handle` threw: it is not called again.
        var handlerFailed = false
        var handled = 0
        var iterator = stream.makeAsyncIterator()
        var stopping = false
        while true {
            let batch: ArraySlice<Advertisement>?
            do {
                batch = try await iterator.nextBatch()
            } catch {
                failure = failure ?? ToolError("scanning stopped: \(error)")
                break
            }
            guard let batch else { break }
            // After a failure in `handle`, what is left is drained unseen.
            if !handlerFailed {
                do {
                    for advertisement in batch {
                        handled += 1
                        try handle(.advertisement(advertisement))
                    }
                    if !batch.isEmpty { try handle(.caughtUp(dropped: iterator.droppedCount)) }
                    if flags.tick.exchange(false, ordering: .acquiring) {
                        try handle(.tick(MonotonicClock.nanoseconds()))
                    }
                } catch {
                    failure = error
                    handlerFailed = true
                }
            }
            if !stopping, failure != nil || flags.stop.load(ordering: .acquiring) {
                stopping = true
                // Scanning off on the controller; then the stream hands out what is left
                // (advertisements held for a scan response included) and ends.
                await stream.stop()
            }
        }
        // Drops after the last batch (the stream ended or failed since) are told too.
        if !handlerFailed {
            do { try handle(.caughtUp(dropped: iterator.droppedCount)) } catch { failure = failure ?? error }
        }
        stopped()
        let dropped = iterator.droppedCount
        if dropped > 0 {
            printError("\(handled) advertisements handled, \(dropped) dropped: this tool fell behind the controller (\(bufferLimit) were waiting)")
        }
        // What never became a packet is a loss too: bytes the framer could not align.
        var transport = controller.transport
        if let capturing = transport as? CapturingTransport { transport = capturing.base }
        if let framing = (transport as? DescriptorTransport)?.statistics, framing.droppedFrames > 0 || framing.skippedBytes > 0 {
            printError("the transport discarded \(framing.droppedFrames) frames (\(framing.skippedBytes) bytes) it could not align, \(framing.stalls) of them stalled")
        }
        if let failure { throw failure }
    }

    private final class Flags: Sendable {
        let stop = Atomic(false)
        let tick = Atomic(false)
    }
}
