import BluetoothCore
import Dispatch
import Glibc
import HCITransport

/// A fake controller on TCP for a tool run as a user runs it: listens on 127.0.0.1, serves
/// the first host that connects, and once that host enables scanning, sends a report
/// stream at a fixed rate or as fast as the socket takes it.
final class FloodController {
    let port: Int
    private let listener: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw BenchError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, socketAddress, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(listener)
            throw BenchError("cannot listen on 127.0.0.1")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(listener) }

    /// The host that connects within `seconds`, served by a fake controller.
    func accept(within seconds: Int32 = 30) throws -> StreamController {
        var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, seconds * 1000) == 1 else { throw BenchError("no host connected within \(seconds) s") }
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { throw BenchError("accept failed") }
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return StreamController(fd: fd)
    }

    /// Waits for scanning, then writes `stream`: `rate` reports a second in 1 ms slices, or
    /// (rate 0) as fast as the socket takes 64 KiB writes. Returns the monotonic times of
    /// the first and last write.
    static func send(_ stream: ReportStream, rate: Int, to controller: StreamController) throws -> (start: UInt64, end: UInt64) {
        guard controller.scanStarted.wait(timeout: .now() + .seconds(30)) == .success else {
            throw BenchError("the host did not enable scanning within 30 s")
        }
        let start = MonotonicClock.nanoseconds()
        var index = 0
        var chunk: [UInt8] = []
        chunk.reserveCapacity(70_000)
        while index < stream.frames.count {
            var due = stream.frames.count
            if rate > 0 {
                // Paced like a radio: the reports due by now, one write per millisecond.
                let elapsed = MonotonicClock.nanoseconds() - start
                due = min(stream.frames.count, Int(elapsed / 1_000) * rate / 1_000_000 + 1)
                if due <= index {
                    var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                    nanosleep(&pause, nil)
                    continue
                }
            }
            chunk.removeAll(keepingCapacity: true)
            while index < due, chunk.count < 65_536 {
                chunk += stream.frames[index]
                index += 1
            }
            controller.write(chunk)
        }
        return (start, MonotonicClock.nanoseconds())
    }
}
