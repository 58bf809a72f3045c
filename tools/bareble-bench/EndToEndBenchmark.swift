import BluetoothCore
import CAllocationCounter
import Glibc
import HCI
import HCITransport
import Synchronization

/// Reports through the real path: H4 bytes on a socketpair, BareBLE's reader thread and
/// framer, the controller driver, the scanner, and a consumer: the low-latency callback on
/// the reader thread, or a task iterating the AsyncSequence (``AdvertisementStream``).
struct EndToEndBenchmark {
    enum Consumer {
        case callback
        /// `for try await` over the stream, its buffer as large as `bufferLimit`.
        case stream(bufferLimit: Int)
    }

    struct Throughput {
        var reportsPerSecond: Double
        /// Everything the process allocated during the run (reader, driver, scanner, the
        /// producer's 64 KiB chunk copies), per report.
        var allocationsPerReport: Double
        var bytesPerReport: Double
    }

    struct Latency {
        var p50: Double, p99: Double, p999: Double, max: Double
        var samples: Int
    }

    /// Collects what the consumer callback sees; written only on the reader thread.
    final class Recorder: Sendable {
        struct State {
            var received = 0
            var expected = 0
            var latencies: [UInt64] = []
            var recordLatency = false
            var done: CheckedContinuation<Void, Never>?
        }
        let state = Lock(State())
        /// Reports received so far, readable without the lock by the paced producer.
        let delivered = Atomic(0)

        func record(_ advertisement: Advertisement) {
            let now = MonotonicClock.nanoseconds()
            let done: CheckedContinuation<Void, Never>? = state.withLock { state in
                state.received += 1
                delivered.store(state.received, ordering: .releasing)
                if state.recordLatency {
                    let sent = ReportStream.timestamp(inData: advertisement.advertisingData.bytes)
                    state.latencies.append(now &- sent)
                }
                guard state.received == state.expected, let done = state.done else { return nil }
                state.done = nil
                return done
            }
            done?.resume()
        }

        /// Arms for `count` reports; `body` produces them; returns when all arrived.
        func expect(_ count: Int, latency: Bool, _ body: @Sendable @escaping () -> Void) async {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.received = 0
                    delivered.store(0, ordering: .releasing)
                    state.expected = count
                    state.recordLatency = latency
                    state.latencies = []
                    state.latencies.reserveCapacity(latency ? count : 0)
                    state.done = continuation
                }
                Thread.detach(body)
            }
        }

        /// Gives up on a run whose reports never all arrived, so a lost report shows as a
        /// message with the counts instead of a benchmark that hangs.
        func watchdog(after seconds: Int, explain: @escaping @Sendable () -> String) -> Task<Void, Never> {
            Task {
                do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
                let (done, received, expected) = state.withLock { state in
                    defer { state.done = nil }
                    return (state.done, state.received, state.expected)
                }
                guard let done else { return }
                var standardError = StandardError()
                print("bareble-bench: only \(received) of \(expected) reports arrived in \(seconds) s; \(explain())", to: &standardError)
                done.resume()
            }
        }
    }

    let controller: StreamController
    let transport: DescriptorTransport
    let recorder = Recorder()
    let hci: HCIController
    let scanner: Scanner
    private let stop: @Sendable () async -> Void

    init(consumer: Consumer = .callback, wait: ReaderWait = .blocking) async throws {
        (controller, transport) = try StreamController.pair(wait: wait)
        hci = HCIController(transport: transport)
        try hci.start()
        try await hci.powerOn()
        let recorder = self.recorder
        let scanner = Scanner(controller: hci)
        self.scanner = scanner
        switch consumer {
        case .callback:
            let session = try await scanner.scan { recorder.record($0) }
            stop = { await session.stop() }
        case let .stream(bufferLimit):
            let stream = try await scanner.scan(bufferLimit: bufferLimit)
            let reading = Task {
                for try await advertisement in stream { recorder.record(advertisement) }
            }
            stop = {
                await stream.stop()
                _ = await reading.result
            }
        }
        guard controller.isScanning else { throw BenchError("the scanner did not enable scanning") }
    }

    /// The whole stream written as fast as the socket takes it, in 64 KiB writes.
    func throughput(_ stream: ReportStream) async -> Throughput {
        let bytes = stream.concatenated
        let controller = self.controller
        let before = (bareble_allocation_count(), bareble_allocated_bytes())
        bareble_allocation_counter_enable(1)
        let start = ContinuousClock.now
        let watchdog = recorder.watchdog(after: 300, explain: explain)
        defer { watchdog.cancel() }
        await recorder.expect(stream.frames.count, latency: false) {
            var offset = 0
            // Cut at frame boundaries so command answers never land inside a frame.
            var cut = 0
            var cuts: [Int] = []
            for frame in stream.frames {
                cut += frame.count
                if cut - offset >= 65_536 { cuts.append(cut); offset = cut }
            }
            cuts.append(bytes.count)
            var from = 0
            for to in cuts {
                controller.write(Array(bytes[from..<to]))
                from = to
            }
        }
        let elapsed = ContinuousClock.now - start
        bareble_allocation_counter_enable(0)
        let count = Double(stream.frames.count)
        return Throughput(
            reportsPerSecond: count / (nanoseconds(elapsed) / 1e9),
            allocationsPerReport: Double(bareble_allocation_count() - before.0) / count,
            bytesPerReport: Double(bareble_allocated_bytes() - before.1) / count)
    }

    /// One report at a time: stamp, write, wait until the consumer holds it, next. The
    /// host's latency from "readable on the descriptor" to "in the consumer's hands", with
    /// no queueing behind earlier reports (a burst's queueing is the throughput figure).
    func latency(_ stream: ReportStream) async -> Latency {
        let controller = self.controller
        let recorder = self.recorder
        await recorder.expect(stream.frames.count, latency: true) {
            for (index, var frame) in stream.frames.enumerated() {
                stream.stamp(&frame, MonotonicClock.nanoseconds())
                controller.write(frame)
                let deadline = MonotonicClock.nanoseconds() + 1_000_000_000
                while recorder.delivered.load(ordering: .acquiring) <= index, MonotonicClock.nanoseconds() < deadline {}
            }
        }
        let sorted = recorder.state.withLock { $0.latencies }.sorted()
        func percentile(_ p: Double) -> Double {
            Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
        }
        return Latency(p50: percentile(0.5), p99: percentile(0.99), p999: percentile(0.999),
                       max: Double(sorted.last ?? 0) / 1000, samples: sorted.count)
    }

    /// The process's CPU time over wall time while `stream` is written at `rate` reports a
    /// second, one at a time: what the reader costs when the controller is not flooding
    /// (a spinning reader keeps a core busy for its window after every packet).
    func cpuShare(_ stream: ReportStream, rate: Int) async -> Double {
        let controller = self.controller
        let cpuBefore = Self.processCPUNanoseconds()
        let start = MonotonicClock.nanoseconds()
        await recorder.expect(stream.frames.count, latency: false) {
            let gap = 1_000_000_000 / UInt64(max(1, rate))
            for (index, frame) in stream.frames.enumerated() {
                // Pacing a producer is what sleeping is for: it stands for the radio.
                let due = start &+ UInt64(index) &* gap
                let now = MonotonicClock.nanoseconds()
                if due > now {
                    var pause = timespec(tv_sec: Int(due - now) / 1_000_000_000, tv_nsec: Int(due - now) % 1_000_000_000)
                    nanosleep(&pause, nil)
                }
                controller.write(frame)
            }
        }
        let wall = MonotonicClock.nanoseconds() - start
        return Double(Self.processCPUNanoseconds() - cpuBefore) / Double(wall)
    }

    static func processCPUNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// What the transport and the scanner counted, for a run that lost reports.
    private var explain: @Sendable () -> String {
        let transport = transport
        let scanner = scanner
        return { "framer \(transport.statistics), scanner \(scanner.statistics)" }
    }

    func finish() async {
        await stop()
        hci.close()
        controller.close()
        transport.close()
    }
}

/// A detached OS thread for the benchmark's producer (keeps the cooperative pool free).
enum Thread {
    static func detach(_ body: @Sendable @escaping () -> Void) {
        final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        pthread_detach(thread)
    }
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        let bytes = Array(string.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
