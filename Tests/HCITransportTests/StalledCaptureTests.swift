import BluetoothCore
import Glibc
@testable import HCITransport
import Testing
import TestSupport

/// A capture (`--btsnoop`) is written from the thread that moves the packet, the reader's
/// among them. A capture file that stops taking bytes (a FIFO into Wireshark that stopped
/// reading, a slow card) must not stop the reader: what the file does not take at once
/// waits in a bounded queue for a writer thread, and past the bound records are dropped,
/// counted, and the count is written into the next record's drops field, as btsnoop has
/// it.
@Suite struct StalledCaptureTests {
    /// 5,000 events: 155 KB of capture, more than a pipe's 64 KiB.
    static let events = 5_000

    /// A FIFO nobody reads yet, and its read end, opened first so the writer's open does
    /// not wait for a reader.
    static func unreadFIFO(_ name: String) throws -> (path: String, readEnd: Int32) {
        let path = temporaryPath(name)
        unlink(path)
        guard mkfifo(path, 0o600) == 0 else { throw BTSnoopError.cannotWrite(path: path, reason: Posix.message(errno)) }
        let readEnd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard readEnd >= 0 else { throw BTSnoopError.cannotRead(path: path, reason: Posix.message(errno)) }
        return (path, readEnd)
    }

    /// Everything left in the FIFO until the writer closes it (or 60 s pass: `ended` false).
    static func readToEnd(_ fd: Int32) -> (bytes: [UInt8], ended: Bool) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = MonotonicClock.nanoseconds() + 60_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, 100)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 { bytes += chunk[..<count]; continue }
            if count == 0 { return (bytes, true) }
        }
        return (bytes, false)
    }

    /// Starts reading the FIFO to its end on a thread of its own at once (not a task: a
    /// test run with every suite in parallel may not give a task a thread before a close
    /// that waits for the reader gives up).
    static func startReading(_ fd: Int32) -> Inbox<[UInt8]> {
        let result = Inbox<[UInt8]>()
        if case let .success(thread) = PosixThread.start({ result.put(readToEnd(fd).bytes) }) { pthread_detach(thread) }
        return result
    }

    /// A socketpair transport captured into `writer`, and the controller's end.
    struct CapturedLink {
        let transport: CapturingTransport
        let controller: Int32
        let received = Inbox<Bool>()

        init(_ writer: BTSnoopWriter) throws {
            var pair: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            controller = pair[0]
            transport = CapturingTransport(try DescriptorTransport.stream(fd: pair[1], name: "socketpair"), writer: writer)
            let received = self.received
            try transport.start(receive: { _ in received.put(true) }, closed: { _ in })
        }

        /// The controller sends `count` Command Completes; returns how many the reader has
        /// heard in all, waiting for `total`.
        func flood(_ count: Int, total: Int) async throws -> Int {
            let flood = [UInt8]((0..<count).map { _ in Samples.resetComplete.h4Bytes }.joined())
            let controller = self.controller
            try await onOwnThread { writeAll(controller, flood) }
            let received = self.received
            return try await onOwnThread { received.wait(for: total, seconds: 60).count }
        }

        func close() {
            transport.close()
            Glibc.close(controller)
        }
    }

    @Test func aCaptureThatTakesNothingDoesNotHoldTheReader() async throws {
        let fifo = try Self.unreadFIFO("stalled-capture.fifo")
        defer { close(fifo.readEnd); unlink(fifo.path) }
        let writer = try BTSnoopWriter(path: fifo.path)
        let link = try CapturedLink(writer)
        // Before, the reader waited in write() once the FIFO was full: about 2,100 heard.
        #expect(try await link.flood(Self.events, total: Self.events) == Self.events)
        // The reader of the FIFO comes back: everything queued is written, nothing lost.
        let reading = Self.startReading(fifo.readEnd)
        try await onOwnThread { link.close() }
        let file = try BTSnoopFile(parsing: try await onOwnThread { reading.wait(for: 1, seconds: 60).first ?? [] })
        #expect(file.records.count == Self.events)
        #expect(file.records.allSatisfy { $0.drops == 0 && $0.packet == Samples.resetComplete })
        #expect(writer.dropped == 0)
    }

    @Test func pastItsBoundTheCaptureDropsRecordsAndSaysHowManyInTheFile() async throws {
        let fifo = try Self.unreadFIFO("dropping-capture.fifo")
        defer { close(fifo.readEnd); unlink(fifo.path) }
        let logs = LogCapture()
        let writer = try BTSnoopWriter(path: fifo.path, queueLimit: 8 * 1024, logger: logs.logger(DescriptorTransport.defaultLogLabel))
        let link = try CapturedLink(writer)
        #expect(try await link.flood(Self.events, total: Self.events) == Self.events)
        // The pipe took about 64 KiB, the queue 8 KiB more; the rest was counted.
        let droppedInFlood = writer.dropped
        #expect(droppedInFlood > 0)
        // The FIFO's reader comes back; ten more packets are all recorded, and carry the
        // count of those lost before them.
        let reading = Self.startReading(fifo.readEnd)
        try await waitUntil { writer.queuedBytes == 0 }
        #expect(try await link.flood(10, total: Self.events + 10) == Self.events + 10)
        try await onOwnThread { link.close() }
        let records = try BTSnoopFile(parsing: try await onOwnThread { reading.wait(for: 1, seconds: 60).first ?? [] }).records
        #expect(writer.dropped == droppedInFlood)
        #expect(records.count + writer.dropped == Self.events + 10)
        // btsnoop's drops field is cumulative: each record says how many were lost before it.
        let drops = records.map { Int($0.drops) }
        #expect(drops == drops.sorted())
        #expect(drops.suffix(10) == Array(repeating: droppedInFlood, count: 10))
        // A few warnings (at 1, 2, 4, ... drops), each with the running count.
        let warnings = logs.lines(at: .warning)
        #expect(!warnings.isEmpty && warnings.count < 20, "\(warnings)")
        #expect(warnings.first?.metadata["captureDropped"] == "1")
    }

    @Test func closingACaptureNobodyReadsGivesUpAndSaysWhatIsMissing() async throws {
        let fifo = try Self.unreadFIFO("abandoned-capture.fifo")
        defer { close(fifo.readEnd); unlink(fifo.path) }
        let logs = LogCapture()
        let writer = try BTSnoopWriter(path: fifo.path, logger: logs.logger(DescriptorTransport.defaultLogLabel))
        let link = try CapturedLink(writer)
        #expect(try await link.flood(Self.events, total: Self.events) == Self.events)
        let queued = writer.queuedBytes
        #expect(queued > 0)
        // close waits its 2 s for the FIFO, then gives up: it returns, and says so.
        try await onOwnThread { link.close() }
        let warning = logs.lines(at: .warning).first { $0.metadata["unwrittenBytes"] != nil }
        #expect(Int(warning?.metadata["unwrittenBytes"] ?? "") ?? 0 > 0, "\(logs.lines)")
        #expect(Int(warning?.metadata["unwrittenBytes"] ?? "") ?? .max <= queued)
        // The writer thread lets go of the FIFO: its reader then sees the end of the file.
        let rest = try await onOwnThread { Self.readToEnd(fifo.readEnd) }
        #expect(rest.ended)
        #expect(rest.bytes.count > 60_000)
        #expect(throws: BTSnoopError.cannotWrite(path: fifo.path, reason: "the capture is closed")) {
            try writer.write(Samples.reset, direction: .hostToController)
        }
    }

    /// The FIFO's reader goes away (Wireshark closed): the capture ends, once, with a
    /// warning that says why, and the transport goes on. Before, the next record's write
    /// raised SIGPIPE, which ended the whole process (the tool left the controller
    /// scanning).
    @Test func aCaptureWhoseReaderLeavesEndsAndTheTransportGoesOn() async throws {
        let fifo = try Self.unreadFIFO("left-capture.fifo")
        defer { unlink(fifo.path) }
        let logs = LogCapture()
        let writer = try BTSnoopWriter(path: fifo.path, logger: logs.logger(DescriptorTransport.defaultLogLabel))
        close(fifo.readEnd)
        let link = try CapturedLink(writer)
        #expect(try await link.flood(100, total: 100) == 100)
        try await onOwnThread { link.close() }
        #expect(throws: BTSnoopError.cannotWrite(path: fifo.path, reason: Posix.message(EPIPE))) {
            try writer.write(Samples.reset, direction: .hostToController)
        }
        let warnings = logs.lines(at: .warning)
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.metadata["reason"] == Posix.message(EPIPE), "\(warnings)")
    }
}
