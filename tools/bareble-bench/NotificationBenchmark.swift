import BluetoothCore
import ArgumentParser
import ATT
import Glibc
import Synchronization

/// `bareble-bench notify`: notifications per second and host CPU per notification through
/// the whole receive path (reader thread to the GATT subscriber's AsyncStream), beside the
/// same stream through Bumble's host and GATT client.
struct NotificationBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Notifications per second and CPU per notification on the GATT receive path, against Bumble's host on the same stream."
    )

    @Option(help: "Notifications per run.")
    var notifications = 200_000

    @Option(help: "Value sizes to measure (bytes; at most 244 so one notification fits a 251-byte ACL packet).")
    var sizes: [Int] = [20, 244]

    @Option(help: "Python with bumble installed, for the baseline (default: the checkout's .venv, else python3).")
    var python: String?

    @Flag(help: "Skip the Bumble baseline.")
    var skipBumble = false

    func validate() throws {
        for size in sizes where !(1...244).contains(size) { throw ValidationError("--sizes \(size) is outside 1 ... 244") }
        guard notifications > 0 else { throw ValidationError("--notifications must be more than 0") }
    }

    func run() async throws {
        print("bareble-bench notify: \(grouped(notifications)) Handle Value Notifications per size, ATT_MTU 517, 251-byte ACL packets")
        let link = try await NotificationLink()
        // Warm up allocators and caches once.
        let warmUp = min(notifications, 20_000)
        _ = try await measure(link, NotificationLink.stream(count: warmUp, size: sizes[0]), count: warmUp, consumer: .stream)
        for size in sizes {
            let stream = NotificationLink.stream(count: notifications, size: size)
            var streamRate = 0.0
            for consumer in [Consumer.handler, .stream] {
                let result = try await measure(link, stream, count: notifications, consumer: consumer)
                if consumer == .stream { streamRate = result.perSecond }
                print("BareBLE  \(padded(String(size), 3)) B  \(padded(fixed(result.perSecond), 10)) notifications/s  \(padded(fixed(result.cpuMicroseconds, 2), 6)) µs CPU each  \(consumer.label)")
            }
            guard !skipBumble else { continue }
            let bumble = try BumbleBaseline.run(
                "bumble_notify_baseline.py", stream: stream.bytes, arguments: [String(notifications), String(NotificationLink.valueHandle)],
                key: "notifications_per_second", python: python)
            print("Bumble   \(padded(String(size), 3)) B  \(padded(fixed(bumble), 10)) notifications/s  (same stream, in-process H4 parser, Host, GATT client subscriber)  ratio \(fixed(streamRate / bumble, 1)) x (stream)")
        }
        link.finish()
    }

    struct Result { var perSecond: Double; var cpuMicroseconds: Double }

    enum Consumer {
        /// `subscribe(to:handler:)`: called on the reader thread.
        case handler
        /// `subscribe(to:)`: an AsyncStream read by a task.
        case stream

        var label: String {
            switch self {
            case .handler: "handler on the reader thread (whole-process CPU; target < 5 µs)"
            case .stream: "AsyncStream consumer task"
            }
        }
    }

    /// Writes the stream from a producer thread, in batches of 64, never more than 192
    /// ahead of the consumer: a subscription stream keeps the newest 256 values for a
    /// consumer that falls behind (a peer sets the pace), so an unpaced burst would measure
    /// dropping. The CPU figure is the whole process's: reader, driver, L2CAP, ATT, GATT, the
    /// consumer, and the producer's writes and pacing.
    private func measure(
        _ link: NotificationLink, _ stream: (bytes: [UInt8], frameSize: Int), count: Int, consumer: Consumer
    ) async throws -> Result {
        let controller = link.controller
        let consumed = Atomic(0)
        let produce: @Sendable () -> Void = {
            var sent = 0
            while sent < count {
                while sent - consumed.load(ordering: .acquiring) > 192 { usleep(20) }
                let next = min(count, sent + 64)
                controller.write(Array(stream.bytes[sent * stream.frameSize..<next * stream.frameSize]))
                sent = next
            }
        }
        let startCPU: Double
        let start: ContinuousClock.Instant
        switch consumer {
        case .stream:
            let values = try await link.gatt.subscribe(to: link.characteristic)
            startCPU = processCPUNanoseconds()
            start = .now
            Thread.detach(produce)
            var received = 0
            for await _ in values {
                received += 1
                consumed.store(received, ordering: .releasing)
                if received == count { break }
            }
        case .handler:
            let done = Lock<CheckedContinuation<Void, Never>?>(nil)
            let subscription = try await link.gatt.subscribe(to: link.characteristic) { _ in
                if consumed.add(1, ordering: .acquiringAndReleasing).newValue == count { done.withLock { $0 }?.resume() }
            }
            startCPU = processCPUNanoseconds()
            start = .now
            await withCheckedContinuation { continuation in
                done.withLock { $0 = continuation }
                Thread.detach(produce)
            }
            subscription.cancel()
        }
        let elapsed = ContinuousClock.now - start
        let cpu = processCPUNanoseconds() - startCPU
        let received = consumed.load(ordering: .acquiring)
        guard received == count else { throw BenchError("the subscription ended after \(received) of \(count) notifications") }
        return Result(perSecond: Double(count) / (nanoseconds(elapsed) / 1e9), cpuMicroseconds: cpu / Double(count) / 1000)
    }
}

func processCPUNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}
