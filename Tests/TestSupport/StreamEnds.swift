import BluetoothCore
import Glibc
import HCITransport

// The controller's end of a byte stream, for tests that play the controller over a
// socket: read and write it whole, and make a transport whose stream takes nothing more.

/// Reads exactly `count` bytes from `fd` within `seconds` (fewer if it ends or stays silent).
public func readExactly(_ fd: Int32, _ count: Int, seconds: UInt64 = 5) -> [UInt8] {
    var out: [UInt8] = []
    let deadline = MonotonicClock.nanoseconds() + seconds * 1_000_000_000
    var buffer = [UInt8](repeating: 0, count: count)
    while out.count < count {
        guard Posix.wait(fd, for: Int16(POLLIN), until: deadline) > 0 else { break }
        let n = read(fd, &buffer, count - out.count)
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return out
}

/// Writes all of `bytes` to `fd` (a closed peer is an error, not a SIGPIPE that ends the
/// test run).
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { _ = try? Posix.writeAll(fd, $0, until: UInt64.max, to: Posix.WriteTarget(fd: fd)) }
}

/// The controller's end of a socketpair and a stream transport on the other, whose send
/// buffer is already full: the controller has read nothing (a UART held by CTS, a TCP peer
/// that stopped reading). `filler` is how many bytes the controller must read before the
/// transport's first frame. `sendTimeout` is the transport's: long by default, so a test
/// on a loaded machine (a full parallel run stalls whole tests for tens of seconds) reads
/// the controller's end before a waiting send gives up.
public func stalledStreamPair(
    sendTimeout: Duration = .seconds(120)
) throws -> (controller: Int32, transport: DescriptorTransport, filler: Int) {
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
        throw TransportError.system(spec: "socketpair", operation: .socket, errno: errno, message: Posix.message(errno))
    }
    let transport = try DescriptorTransport.stream(fd: pair[1], name: "socketpair", sendTimeout: sendTimeout)
    // The transport made its end non-blocking: write straight into it until it is full.
    var filler = 0
    let chunk = [UInt8](repeating: 0xEE, count: 4096)
    while true {
        let written = chunk.withUnsafeBytes { send(pair[1], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written <= 0 { break }
        filler += written
    }
    return (pair[0], transport, filler)
}
