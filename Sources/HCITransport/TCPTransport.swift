import BluetoothCore
import Glibc
// Socket constants are declared by whichever clang module (Glibc or CBluetooth, whose
// headers include <sys/socket.h>) is built first; import both so either works.
import CBluetooth

/// H4 over a TCP connection (`tcp:HOST:PORT`): a controller bridged to the network, or the
/// virtual radio.
public enum TCPTransport {
    /// Connects within `timeout`, trying each address the host resolves to. TCP loses no
    /// byte, so by default a packet split across segments is waited for however long its
    /// sender takes (``H4Framer/Configuration/reliable``).
    public static func connect(
        host: String, port: Int, timeout: Duration = .seconds(5),
        framing: H4Framer.Configuration = .controllerToHost.reliable, wait: ReaderWait = .blocking,
        cleanup: (@Sendable () -> Void)? = nil
    ) throws(TransportError) -> DescriptorTransport {
        let spec = TransportSpec.tcp(host: host, port: port)
        let fd = try connectedSocket(host: host, port: port, timeout: timeout, spec: spec)
        let loop = try DescriptorLoop(fd: fd, spec: spec, name: spec.description, wait: wait, cleanup: cleanup)
        return DescriptorTransport(loop: loop, framing: .stream(framing))
    }

    static func connectedSocket(host: String, port: Int, timeout: Duration, spec: TransportSpec) throws(TransportError) -> Int32 {
        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let detail = gai_strerror(status).map { String(cString: $0) } ?? "error \(status)"
            throw .hostNotFound(host: host, detail: detail)
        }
        defer { freeaddrinfo(list) }
        var lastError = TransportError.from(errno: ECONNREFUSED, operation: .connect, spec: spec)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = TransportError.from(errno: errno, operation: .socket, spec: spec)
                continue
            }
            if let code = Posix.setNonBlocking(fd) {
                Glibc.close(fd)
                throw TransportError.from(errno: code, operation: .configure, spec: spec)
            }
            var result = Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
            var code = result == 0 ? 0 : errno
            if code == EINPROGRESS || code == EINTR {
                let revents = Posix.wait(fd, for: Int16(POLLOUT), until: deadline)
                if revents == 0 {
                    Glibc.close(fd)
                    throw .timedOut(spec: spec.description, waitingFor: "the TCP connection", after: timeout)
                }
                var socketError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                result = getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
                code = revents < 0 ? -revents : (result == 0 ? socketError : errno)
            }
            guard code == 0 else {
                Glibc.close(fd)
                lastError = TransportError.from(errno: code, operation: .connect, spec: spec)
                continue
            }
            // Each HCI packet is small and latency-bound: never let Nagle hold one back.
            var on: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        throw lastError
    }
}
