import BluetoothCore
import Dispatch
import Glibc
@testable import HCITransport
import Synchronization
import Testing
import TestSupport

/// A byte stream that stops taking bytes (a UART held by CTS, a TCP peer that stopped
/// reading) must not stop the reader: it still hears the controller, whose events (Number
/// Of Completed Packets among them) are what would let the writes go on. A write waits for
/// its frame within its own deadline; the reader's own frames wait in a bounded backlog.
@Suite struct StalledStreamTests {
    let acl: [HCIPacket] = (1...3).map { HCIPacket(.acl, [0x40, 0x00, 0x01, 0x00, UInt8($0)]) }

    @Test func aWriteTheStreamHoldsBackDoesNotHoldTheReader() async throws {
        let (controller, transport, filler) = try stalledStreamPair()
        defer { close(controller) }
        let writerReturned = Atomic(false)
        let received = Inbox<Bool>()
        let acl = self.acl
        try transport.start(receive: { _ in
            // Whether the other thread's write was still waiting when this event came in.
            received.put(writerReturned.load(ordering: .acquiring))
            // The reader's own frame: queued behind that write, never waited for here.
            try? transport.send(acl[1])
        }, closed: { _ in })
        defer { transport.close() }
        let started = DispatchSemaphore(value: 0)
        let outcome = Inbox<String>()
        // A thread of its own: the send blocks it (a dispatch queue's would be the pool's).
        let writer = PosixThread.start {
            started.signal()
            do throws(TransportError) {
                try transport.send(acl[0])
                outcome.put("sent")
            } catch {
                outcome.put("\(error)")
            }
            writerReturned.store(true, ordering: .releasing)
        }
        if case let .success(thread) = writer { pthread_detach(thread) }
        #expect(try await onOwnThread { started.wait(timeout: .now() + 60) } == .success)
        // Let the writer reach its wait for the full stream (sequencing only: with the
        // stream full it waits there until the controller reads).
        try await Task.sleep(for: .milliseconds(200))
        writeAll(controller, Samples.resetComplete.h4Bytes)
        // Heard while the write still waited. Before, the reader waited for the writer's
        // lock until the write's time ran out.
        #expect(try await onOwnThread { received.wait(for: 1, seconds: 60) } == [false])
        // The controller reads again: the filler, the waiting frame, then the reader's.
        let frames = acl[0].h4Bytes + acl[1].h4Bytes
        let read = try await onOwnThread { (readExactly(controller, filler, seconds: 60).count, readExactly(controller, frames.count, seconds: 60)) }
        #expect(read.0 == filler)
        #expect(read.1 == frames)
        #expect(try await onOwnThread { outcome.wait(for: 1, seconds: 60) } == ["sent"])
    }

    @Test func aStreamThatTakesNothingEndsAtItsDeadlineAndTheReaderHearsTheControllerMeanwhile() async throws {
        // 60 s: long enough for a loaded machine to hand the test both events before it
        // runs out (2 s and 10 s were not: the full parallel run stalls whole tests for
        // tens of seconds at its start).
        let (controller, transport, _) = try stalledStreamPair(sendTimeout: .seconds(60))
        defer { close(controller) }
        let received = Inbox<HCIPacket>()
        let ended = Inbox<TransportError?>()
        let acl = self.acl
        try transport.start(receive: { packet in
            received.put(packet)
            try? transport.send(acl[0])
        }, closed: { ended.put($0) })
        defer { transport.close() }
        writeAll(controller, Samples.resetComplete.h4Bytes)
        #expect(try await onOwnThread { received.wait(for: 1, seconds: 60) } == [Samples.resetComplete])
        // Before, the reader itself waited out the send timeout for the stream to take the
        // answer to the first event, then ended: the second was never read.
        writeAll(controller, Samples.commandStatus.h4Bytes)
        #expect(try await onOwnThread { received.wait(for: 2, seconds: 60) } == [Samples.resetComplete, Samples.commandStatus])
        #expect(ended.snapshot.isEmpty)
        // Nothing taken for the send timeout: the transport ends, and says why.
        let outcome = try await onOwnThread { ended.wait(for: 1, seconds: 120) }
        guard case .timedOut? = outcome.first ?? nil else {
            Issue.record("the transport should end timed out, not \(outcome)")
            return
        }
        #expect(throws: TransportError.self) { try transport.send(acl[1]) }
    }

    @Test func theReadersBacklogIsBoundedAndOverflowingItEndsTheTransport() async throws {
        let (controller, transport, _) = try stalledStreamPair()
        defer { close(controller) }
        let ended = Inbox<TransportError?>()
        let big = HCIPacket(.acl, [0x40, 0x00, 0x00, 0x04] + [UInt8](repeating: 0xAB, count: 1024))
        try transport.start(receive: { _ in
            // Far more than any controller's buffers let a host have in flight.
            for _ in 0..<(DescriptorLoop.backlogLimit / 1024 + 1) { try? transport.send(big) }
        }, closed: { ended.put($0) })
        defer { transport.close() }
        writeAll(controller, Samples.resetComplete.h4Bytes)
        let outcome = try await onOwnThread { ended.wait(for: 1, seconds: 60) }
        guard case let .outputBacklog(_, bytes)? = outcome.first ?? nil else {
            Issue.record("the transport should end on its backlog, not \(outcome)")
            return
        }
        #expect(bytes > DescriptorLoop.backlogLimit)
    }

    /// `post` queues a frame without waiting for the stream: async code sends commands and
    /// ACL that way, so no thread of the tasks' pool waits for a UART held by CTS. The
    /// reader writes the frame when the stream can take it.
    @Test func aPostedFrameDoesNotWaitAndGoesOutWhenTheStreamTakesIt() async throws {
        let (controller, transport, filler) = try stalledStreamPair()
        defer { close(controller) }
        try transport.start(receive: { _ in }, closed: { _ in })
        defer { transport.close() }
        let acl = self.acl
        // Returns at once: before (a waiting send) it waited for the controller to read.
        try await onOwnThread { try transport.post(acl[0]) }
        try await onOwnThread { try transport.post(acl[1]) }
        let frames = acl[0].h4Bytes + acl[1].h4Bytes
        let read = try await onOwnThread { (readExactly(controller, filler, seconds: 60).count, readExactly(controller, frames.count, seconds: 60)) }
        #expect(read.0 == filler)
        #expect(read.1 == frames)
    }

    @Test func aPostedFrameTheStreamNeverTakesEndsTheTransportAtItsDeadline() async throws {
        let (controller, transport, _) = try stalledStreamPair(sendTimeout: .seconds(1))
        defer { close(controller) }
        let ended = Inbox<TransportError?>()
        try transport.start(receive: { _ in }, closed: { ended.put($0) })
        defer { transport.close() }
        let acl = self.acl
        try await onOwnThread { try transport.post(acl[0]) }
        let outcome = try await onOwnThread { ended.wait(for: 1, seconds: 60) }
        guard case .timedOut? = outcome.first ?? nil else {
            Issue.record("the transport should end timed out, not \(outcome)")
            return
        }
    }
}
