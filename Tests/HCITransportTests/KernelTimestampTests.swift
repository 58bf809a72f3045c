import Glibc
@testable import HCITransport
import Testing
import TestSupport

/// The monitor reader's kernel timestamps (SO_TIMESTAMPNS read with recvmsg), on a local
/// datagram socket, which the kernel stamps the same way: the time is when the datagram
/// was queued, not when the reader got to it.
@Suite struct KernelTimestampTests {
    static func realtimeNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test func aDatagramCarriesTheTimeItWasSentNotTheTimeItWasRead() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &pair) == 0)
        let sender = pair[0]
        defer { close(sender) }
        let loop = try DescriptorLoop(fd: pair[1], spec: nil, name: "socketpair", kernelTimestamps: true)
        let before = Self.realtimeNanoseconds()
        let datagram: [UInt8] = [0x01, 0x02, 0x03]
        #expect(send(sender, datagram, 3, 0) == 3)
        // Taken after the datagram was queued and before the reader exists: a time taken
        // at the read is later than this, the kernel's is not.
        let sent = Self.realtimeNanoseconds()
        let stamps = Inbox<(kernel: Int64?, read: Int64, bytes: [UInt8])>()
        try loop.start(chunk: { bytes, _ in
            if let bytes { stamps.put((loop.kernelTimestamp, Self.realtimeNanoseconds(), Array(bytes))) }
            return nil
        }, closed: { _ in })
        defer { loop.close() }
        let got = try #require(stamps.wait(for: 1).first)
        #expect(got.bytes == [0x01, 0x02, 0x03])
        let kernel = try #require(got.kernel, "no SO_TIMESTAMPNS with the datagram")
        #expect(before <= kernel && kernel <= sent && sent <= got.read, "queued between \(before) and \(sent), stamped \(kernel), read at \(got.read)")
    }

    @Test func withoutTheOptionThereIsNoKernelTime() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        let loop = try DescriptorLoop(fd: pair[1], spec: nil, name: "socketpair")
        let stamps = Inbox<Int64?>()
        try loop.start(chunk: { bytes, _ in
            if bytes != nil { stamps.put(loop.kernelTimestamp) }
            return nil
        }, closed: { _ in })
        defer { loop.close() }
        let datagram: [UInt8] = [0x01]
        #expect(send(pair[0], datagram, 1, 0) == 1)
        #expect(stamps.wait(for: 1) == [nil])
    }
}
