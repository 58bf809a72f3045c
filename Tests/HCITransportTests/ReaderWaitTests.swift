import BluetoothCore
import Glibc
@testable import HCITransport
import Testing
import TestSupport

/// The spinning reader (``ReaderWait/spinning(window:)``) is a way of waiting, nothing
/// more: it must hand out exactly the packets the blocking reader does, across frames cut
/// anywhere and across pauses longer than its window, and close as promptly.
@Suite struct ReaderWaitTests {
    /// 300 advertising reports, each with its own bytes.
    static let packets: [HCIPacket] = (0..<300).map { index in
        HCIPacket(.event, [0x3E, 0x0F, 0x02, 0x01, 0x00, 0x00, UInt8(index & 0xFF), UInt8(index >> 8), 0x33, 0x44, 0x55, 0x66, 0x03, 0x02, 0x01, 0x06, 0xC8])
    }

    func receive(waiting wait: ReaderWait) throws -> [HCIPacket] {
        let listener = try FakeControllerListener()
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: listener.port, wait: wait)
        let controller = listener.accept()
        defer { close(controller) }
        let received = Inbox<HCIPacket>()
        let closes = Inbox<TransportError?>()
        try transport.start(receive: { received.put($0) }, closed: { closes.put($0) })
        let bytes = Self.packets.flatMap(\.h4Bytes)
        var random = SeededRandom(seed: 17)
        var offset = 0
        var piece = 0
        while offset < bytes.count {
            let length = min(bytes.count - offset, Int.random(in: 1...60, using: &random))
            writeAll(controller, Array(bytes[offset..<offset + length]))
            offset += length
            piece += 1
            if piece % 25 == 0 {
                // Longer than the spin window: the reader has to go back to sleeping in
                // poll() and be woken by the next bytes.
                var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
                nanosleep(&pause, nil)
            }
        }
        let packets = received.wait(for: Self.packets.count, seconds: 20)
        transport.close()
        #expect(closes.wait(for: 1).count == 1)
        return packets
    }

    @Test func theSpinningReaderDeliversWhatTheBlockingOneDoes() throws {
        let blocking = try receive(waiting: .blocking)
        let spinning = try receive(waiting: .spinning(window: .milliseconds(2)))
        #expect(blocking == Self.packets)
        #expect(spinning == blocking)
    }

    @Test func aSpinningReaderClosesWhileSpinning() throws {
        let listener = try FakeControllerListener()
        // A window far longer than the test: close must not wait for it to pass.
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: listener.port, wait: .spinning(window: .seconds(600)))
        let controller = listener.accept()
        defer { close(controller) }
        let received = Inbox<HCIPacket>()
        let closes = Inbox<TransportError?>()
        try transport.start(receive: { received.put($0) }, closed: { closes.put($0) })
        writeAll(controller, Samples.advertisingReport.h4Bytes)
        #expect(received.wait(for: 1) == [Samples.advertisingReport])
        let start = MonotonicClock.nanoseconds()
        transport.close()
        #expect(closes.wait(for: 1).count == 1)
        #expect(MonotonicClock.nanoseconds() - start < 5_000_000_000)
    }

    @Test func theSpinWindowInNanoseconds() {
        #expect(ReaderWait.blocking.spinNanoseconds == 0)
        #expect(ReaderWait.spinning(window: .microseconds(250)).spinNanoseconds == 250_000)
        #expect(ReaderWait.spinning(window: .seconds(-1)).spinNanoseconds == 0)
    }
}
