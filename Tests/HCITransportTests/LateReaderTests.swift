import Glibc
@testable import HCITransport
import Testing
import TestSupport

/// A reader thread that runs late (a slow handler on it, or a machine so busy it is not
/// scheduled) must not take its own lateness for a silent controller.
@Suite struct LateReaderTests {
    @Test func bytesThatWaitedWhileTheReaderWasBusyAreNoStall() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let controller = pair[0]
        defer { close(controller) }
        // The framing of a stream that can lose bytes (a UART): the one with a stall gap.
        let transport = try DescriptorTransport.stream(fd: pair[1], name: "socketpair", framing: .controllerToHost)
        let received = Inbox<HCIPacket>()
        try transport.start(receive: { packet in
            received.put(packet)
            // A handler that takes longer than the framer's stall gap (100 ms).
            if packet == Samples.resetComplete {
                var pause = timespec(tv_sec: 0, tv_nsec: 300_000_000)
                nanosleep(&pause, nil)
            }
        }, closed: { _ in })
        defer { transport.close() }
        let report = Samples.advertisingReport.h4Bytes
        // A whole packet and the first half of the next, then the rest while the handler
        // of the first still runs: the rest is waiting, long before the gap, when the
        // reader comes back.
        writeAll(controller, Samples.resetComplete.h4Bytes + report.prefix(6))
        #expect(received.wait(for: 1) == [Samples.resetComplete])
        writeAll(controller, Array(report.dropFirst(6)))
        #expect(received.wait(for: 2) == [Samples.resetComplete, Samples.advertisingReport])
        #expect(transport.statistics.stalls == 0)
    }

    /// A TCP sender that pauses mid-packet for longer than a UART's stall gap (a loaded
    /// machine descheduled it; a segment was retransmitted): TCP loses no byte, so the
    /// packet is completed, not abandoned. Before, one report in ~50,000 was lost this way
    /// under a flood on a loaded machine (`ScanToolFlood`).
    @Test func aTCPSenderThatPausesMidPacketLosesNothing() throws {
        let listener = try FakeControllerListener()
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: listener.port)
        let controller = listener.accept()
        defer { close(controller) }
        let received = Inbox<HCIPacket>()
        try transport.start(receive: { received.put($0) }, closed: { _ in })
        defer { transport.close() }
        let report = Samples.advertisingReport.h4Bytes
        writeAll(controller, Samples.resetComplete.h4Bytes + report.prefix(6))
        #expect(received.wait(for: 1) == [Samples.resetComplete])
        var pause = timespec(tv_sec: 0, tv_nsec: 300_000_000)
        nanosleep(&pause, nil)
        writeAll(controller, Array(report.dropFirst(6)) + Samples.commandStatus.h4Bytes)
        #expect(received.wait(for: 3) == [Samples.resetComplete, Samples.advertisingReport, Samples.commandStatus])
        #expect(transport.statistics.stalls == 0)
        #expect(transport.statistics.droppedFrames == 0)
    }
}
