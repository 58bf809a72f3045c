import BluetoothCore
import Dispatch
import Glibc
@testable import HCITransport
import Testing
import TestSupport

/// On a byte stream, what the reader thread writes while it handles a chunk goes out in
/// one write when the handler returns; another thread's frame is never held back by it and
/// still comes after what the reader wrote first.
@Suite struct CoalescedWriteTests {
    let acl: [HCIPacket] = (1...3).map { HCIPacket(.acl, [0x40, 0x00, 0x01, 0x00, UInt8($0)]) }

    /// The controller's end of a socketpair, and a stream transport on the other.
    func streamPair() throws -> (Int32, DescriptorTransport) {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        return (pair[0], try DescriptorTransport.stream(fd: pair[1], name: "socketpair"))
    }

    @Test func whatTheReaderWritesWhileHandlingAChunkGoesOutWhenTheHandlerReturns() throws {
        let (controller, transport) = try streamPair()
        defer { close(controller) }
        let sent = DispatchSemaphore(value: 0)
        let acl = self.acl
        try transport.start(receive: { _ in
            for packet in acl { try? transport.send(packet) }
            sent.signal()
            var pause = timespec(tv_sec: 0, tv_nsec: 300_000_000)
            nanosleep(&pause, nil)
        }, closed: { _ in })
        defer { transport.close() }
        writeAll(controller, Samples.resetComplete.h4Bytes)
        #expect(sent.wait(timeout: .now() + 5) == .success)
        // The handler still runs: nothing has been written yet.
        #expect(Posix.wait(controller, for: Int16(POLLIN), until: MonotonicClock.nanoseconds() + 100_000_000) == 0)
        // Then all three, in order.
        let expected = acl.flatMap(\.h4Bytes)
        #expect(readExactly(controller, expected.count) == expected)
    }

    @Test func anotherThreadsFrameIsNotHeldBackAndComesAfterTheReadersEarlierOnes() throws {
        let (controller, transport) = try streamPair()
        defer { close(controller) }
        let first = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let acl = self.acl
        try transport.start(receive: { _ in
            try? transport.send(acl[0])
            first.signal()
            _ = release.wait(timeout: .now() + 5)
            try? transport.send(acl[2])
        }, closed: { _ in })
        defer { transport.close() }
        writeAll(controller, Samples.resetComplete.h4Bytes)
        #expect(first.wait(timeout: .now() + 5) == .success)
        // Sent from this thread while the reader's handler waits: out now, after the
        // reader's first frame.
        try transport.send(acl[1])
        let early = acl[0].h4Bytes + acl[1].h4Bytes
        #expect(readExactly(controller, early.count) == early)
        release.signal()
        #expect(readExactly(controller, acl[2].h4Bytes.count) == acl[2].h4Bytes)
    }

    /// A packet posted as header and body apart (the driver's ACL path) is the same H4
    /// frame as the whole packet posted, and a capture wrapped around the stream sees the
    /// whole packet.
    @Test func aPacketPostedAsHeaderAndBodyIsTheSameFrame() throws {
        let (controller, stream) = try streamPair()
        defer { close(controller) }
        let seen = Lock<[HCIPacket]>([])
        let transport = CapturingTransport(stream, observe: { packet, _ in seen.withLock { $0.append(packet) } })
        try transport.start(receive: { _ in }, closed: { _ in })
        defer { transport.close() }
        let header: [UInt8] = [0x40, 0x00, 0x07, 0x00]
        let body: [UInt8] = [0xEE, 0x03, 0x00, 0x04, 0x00, 0x1B, 0x2A, 0x00, 0x64, 0xEE]
        try header.withUnsafeBytes { try transport.post(.acl, header: $0, body: body[1..<8]) }
        let whole = HCIPacket(.acl, header + body[1..<8])
        #expect(readExactly(controller, whole.h4Bytes.count) == whole.h4Bytes)
        #expect(seen.withLock { $0 } == [whole])
    }
}
