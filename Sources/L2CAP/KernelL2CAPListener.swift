import BluetoothCore
import CBluetooth
import Glibc
import HCITransport

/// A listening kernel L2CAP socket on an LE fixed channel (the ATT channel by default):
/// when a central connects to this adapter (advertising connectably), the kernel hands
/// each new link's channel to ``accept(timeout:)`` as a ``KernelL2CAPSocket``. This is
/// how a GATT server serves in the kernel-assisted mode.
public final class KernelL2CAPListener: Sendable {
    public let channel: ChannelIdentifier
    public let localAddress: BluetoothAddress
    public let adapter: Int
    let fd: Int32

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
        self.fd = fd
        self.channel = channel
        self.localAddress = local
        self.adapter = adapter
    }

    deinit { Glibc.close(fd) }

    /// The next incoming link's channel; waits on a thread of its own until `timeout`.
    public func accept(timeout: Duration) async throws(KernelSocketError) -> KernelL2CAPSocket {
        let fd = self.fd
        let channel = self.channel
        let local = localAddress
        let adapter = self.adapter
        let result: Result<KernelL2CAPSocket, KernelSocketError> = await withCheckedContinuation { continuation in
            let started = PosixThread.start {
                continuation.resume(returning: Result { () throws(KernelSocketError) in
                    try Self.acceptBlocking(fd, channel: channel, local: local, adapter: adapter, timeout: timeout)
                })
            }
            if case let .success(thread) = started { pthread_detach(thread) } else {
                continuation.resume(returning: .failure(.system(operation: "pthread_create", errno: EAGAIN, detail: "cannot start a thread")))
            }
        }
        return try result.get()
    }

    static func acceptBlocking(_ fd: Int32, channel: ChannelIdentifier, local: BluetoothAddress, adapter: Int, timeout: Duration) throws(KernelSocketError) -> KernelL2CAPSocket {
        let deadline = MonotonicClock.nanoseconds() &+ Posix.nanoseconds(timeout)
        while true {
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
                do throws(KernelSocketError) {
                    return try KernelL2CAPSocket(fd: client, peer: DeviceAddress(peerAddress, type: type), channel: channel, localAddress: local, adapter: adapter)
                } catch {
                    Glibc.close(client)
                    throw error
                }
            }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .from(errno: code, operation: "accept", peer: nil) }
            let revents = Posix.wait(fd, for: Int16(POLLIN), until: deadline)
            if revents == 0 { throw .timedOut(peer: nil, waitingFor: "a central to connect", after: timeout) }
            if revents < 0 { throw .from(errno: -revents, operation: "accept", peer: nil) }
        }
    }
}
