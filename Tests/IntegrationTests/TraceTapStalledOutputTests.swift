import Glibc
import HCITransport
import Testing
import TestSupport
@testable import ToolSupport

/// `--trace` prints from the thread that moves each packet, the transport's reader among
/// them. A stderr nobody reads (a pipe into a pager that was suspended, a terminal on hold)
/// must not stop that thread: lines wait in a bounded queue, and past it they are dropped
/// and counted, and the next line printed says how many.
@Suite struct TraceTapStalledOutputTests {
    /// An LE Advertising Report: a line of about 120 bytes, so 20,000 overflow the pipe's
    /// 64 KiB and the tap's 1 MiB.
    static let report = HCIPacket(.event, [
        0x3E, 0x0C, 0x02, 0x01, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x00, 0xC5,
    ])
    static let packets = 20_000

    @Test func aStderrNobodyReadsDoesNotHoldTheThreadThatMovesPackets() async throws {
        let pipe = try #require(Posix.makePipe())
        defer { close(pipe.read); close(pipe.write) }
        let tap = TraceTap(printingTo: pipe.write)
        // Returns: before, the observing thread waited in write() once the pipe was full.
        try await onOwnThread {
            for _ in 0..<Self.packets { tap.observe(Self.report, .controllerToHost) }
        }
        let dropped = tap.droppedLines
        #expect(dropped > 0)
        // The reader comes back: the queue drains, and the next line says what was lost.
        async let text = onOwnThread { () -> String in
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !String(decoding: bytes.suffix(200), as: UTF8.self).contains("#\(Self.packets + 1) ") {
                let count = chunk.withUnsafeMutableBytes { read(pipe.read, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes += chunk[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        try await waitUntil { tap.queuedBytes == 0 }
        tap.observe(Self.report, .controllerToHost)
        let lines = try await text.split(separator: "\n")
        tap.close()
        // The summary at the end, on the same stream.
        var end = [UInt8](repeating: 0, count: 512)
        let count = end.withUnsafeMutableBytes { read(pipe.read, $0.baseAddress, $0.count) }
        #expect(String(decoding: end.prefix(max(count, 0)), as: UTF8.self) == "= --trace: \(dropped) lines dropped in all: stderr was not read as fast as packets came\n")
        let printed = lines.filter { $0.hasPrefix(">") }
        #expect(printed.count + dropped == Self.packets + 1)
        #expect(lines.dropLast().last == "= \(dropped) trace lines dropped: stderr was not read as fast as packets came")
        #expect(lines.last?.contains("#\(Self.packets + 1) ") == true)
    }
}
