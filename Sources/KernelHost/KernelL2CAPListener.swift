import BluetoothCore
import CBluetooth
import Glibc
import HCITransport
import L2CAP

/// A listening kernel L2CAP socket on an LE fixed channel (the ATT channel by default):
/// when a central connects to this adapter (advertising connectably), the kernel hands
/// each new link's channel to ``accept(timeout:)`` as a ``KernelL2CAPSocket``. This is
/// how a GATT server serves in the kernel-assisted mode.
///
/// The kernel offers a listener every new LE link of the adapter whose ATT channel no
/// socket has yet, so a link this process connects as central (its socket is on the link
/// before the link is up) is not offered; one another program made, without an ATT
/// socket, is.
///
/// ``close()`` wakes a waiting ``accept(timeout:)`` (a wake pipe beside the socket, as the
/// transports' reader has): poll() does not return when another thread closes the fd it
/// waits on, and a closed fd's number may be reused under it. The socket itself is closed
/// when the listener goes away, after any accept that still holds it; `close()` shuts it
/// down at once, so the kernel stops taking links for it then.
public final class KernelL2CAPListener: Sendable {
    public let channel: ChannelIdentifier
    public let localAddress: BluetoothAddress
    public let adapter: Int
    let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let closed = Lock(false)

    /// Binds to hci`adapter`'s address on `channel` and listens. `security` is what the
    /// kernel must reach on an accepted link before data flows.
    public init(
        adapter: Int, channel: ChannelIdentifier = .attributeProtocol, security: KernelL2CAPSocket.SecurityLevel = .low
    ) throws(KernelSocketError) {
        let local = try KernelL2CAPSocket.adapterAddress(adapter)
        let fd = try KernelL2CAPSocket.openBound(local: local, channel: channel)
        do throws(KernelSocketError) {
            try KernelL2CAPSocket.setSecurity(fd, security)
            guard Glibc.listen(fd, 8) == 0 else { throw KernelSocketError.from(errno: errno, operation: "listen", peer: nil) }
            guard Posix.setNonBlocking(fd) == nil else { throw KernelSocketError.from(errno: errno, operation: "fcntl", peer: nil) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        guard let wake = Posix.makeWakePipe() else {
            let code = errno
            Glibc.close(fd)
            throw .system(operation: "pipe", errno: code, detail: Posix.message(code))
        }
        self.fd = fd
        wakeRead = wake.read
        wakeWrite = wake.write
        self.channel = channel
        self.localAddress = local
        self.adapter = adapter
    }

    deinit {
        Glibc.close(fd)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// Ends listening: a waiting ``accept(timeout:)`` and every later one throw
    /// ``KernelSocketError/listenerClosed``; links accepted before stay.
    public func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        // Never drained: every later wait sees it too.
        var one: UInt8 = 1
        _ = Glibc.write(wakeWrite, &one, 1)
        // The kernel stops listening now (and drops links it accepted that nobody took), not
        // when the last reference goes: until then it would take centrals' channels on CID
        // 4 for nobody. The number stays ours until deinit, so an accept still running on
        // it cannot meet another file.
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The next incoming link's channel; waits on a thread of its own until `timeout`.
    public func accept(timeout: Duration) async throws(KernelSocketError) -> KernelL2CAPSocket {
        let result: Result<KernelL2CAPSocket, KernelSocketError> = await withCheckedContinuation { continuation in
            // The thread holds the listener, so its fd stays open while it waits.
            let started = PosixThread.start { [self] in
                continuation.resume(returning: Result { () throws(KernelSocketError) in try acceptBlocking(timeout: timeout) })
            }
            if case let .success(thread) = started { pthread_detach(thread) } else {
                continuation.resume(returning: .failure(.system(operation: "pthread_create", errno: EAGAIN, detail: "cannot start a thread")))
            }
        }
        return try result.get()
    }

    func acceptBlocking(timeout: Duration) throws(KernelSocketError) -> KernelL2CAPSocket {
        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)
        while true {
            if closed.withLock({ $0 }) { throw .listenerClosed }
            var address = sockaddr_l2()
            var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
            let client = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
            }
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                let bytes = withUnsafeBytes(of: address.l2_bdaddr) { Array($0) }
                let peerAddress = (try? BluetoothAddress(littleEndian: bytes)) ?? .zero
                let type: AddressType = address.l2_bdaddr_type == UInt8(BDADDR_LE_RANDOM) ? .random : .public
                // Owns `client` from here, also when it throws (it closed it then).
                return try KernelL2CAPSocket(fd: client, peer: DeviceAddress(peerAddress, type: type), channel: channel, localAddress: localAddress, adapter: adapter)
            }
            let code = errno
            if code == EINTR { continue }
            // A shut-down listener's accept fails: that is the close, not an error of its own.
            if closed.withLock({ $0 }) { throw .listenerClosed }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .from(errno: code, operation: "accept", peer: nil) }
            switch waitForCentralOrClose(until: deadline) {
            case 0: throw .timedOut(peer: nil, waitingFor: "a central to connect", after: timeout)
            case let failed where failed < 0: throw .from(errno: -failed, operation: "accept", peer: nil)
            default: continue
            }
        }
    }

    /// poll() on the socket and the wake pipe: >0 when either is ready, 0 at the deadline,
    /// a negative errno on failure.
    private func waitForCentralOrClose(until deadline: UInt64) -> Int32 {
        while true {
            var entries = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, Posix.pollTimeout(until: deadline))
            if ready >= 0 { return ready }
            if errno != EINTR { return -errno }
        }
    }
}
