import BluetoothCore
import CBluetooth
import Glibc
import Testing
@testable import HCITransport
import TestSupport

@Suite struct SerialTransportTests {
    /// A pty pair: the master plays the controller, the transport opens the slave path.
    private func openPty() -> (master: Int32, path: String) {
        var path = [CChar](repeating: 0, count: 64)
        let master = bareble_open_pty_master(&path, path.count)
        #expect(master >= 0)
        return (master, String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    @Test func framesBothWaysAndResyncPastGarbage() throws {
        let (master, path) = openPty()
        defer { close(master) }
        let transport = try SerialTransport.open(path: path, baud: 1_000_000, flowControl: true)
        #expect(transport.name == "serial:\(path),1000000,rtscts")
        let received = Inbox<HCIPacket>()
        let closes = Inbox<TransportError?>()
        try transport.start(receive: { received.put($0) }, closed: { closes.put($0) })

        // A stray byte mid-stream, and one that looks like an ACL indicator.
        let bytes = stream([Samples.resetComplete, Samples.advertisingReport]) + [0xA5]
            + stream([Samples.commandStatus]) + [0x02] + stream([Samples.acl, Samples.vendorEvent])
        writeAll(master, bytes)
        let expected = [Samples.resetComplete, Samples.advertisingReport, Samples.commandStatus, Samples.acl, Samples.vendorEvent]
        #expect(received.wait(for: expected.count) == expected)
        // Statistics are published after each read's bytes are framed, which can be just
        // after the last packet was delivered: wait for them, with a deadline.
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        while transport.statistics.skippedBytes < 2, MonotonicClock.nanoseconds() < deadline { usleep(1000) }
        #expect(transport.statistics.skippedBytes == 2)

        try transport.send(Samples.reset)
        #expect(readExactly(master, 4) == Samples.reset.h4Bytes)

        transport.close()
        #expect(closes.snapshot.count == 1)
    }

    @Test func missingDeviceSaysWhatToDo() {
        #expect(throws: TransportError.noSuchDevice(path: "/dev/ttyNOPE0")) {
            try SerialTransport.open(path: "/dev/ttyNOPE0")
        }
        #expect(TransportError.noSuchDevice(path: "/dev/ttyUSB0").description
            == "serial:/dev/ttyUSB0: /dev/ttyUSB0 does not exist: check the adapter is plugged in (ls /dev/ttyUSB* /dev/ttyACM*)")
    }
}
