import BluetoothCore
import CBluetooth
import Glibc
import HCITransport
import L2CAP

/// An LE fixed channel (the ATT channel, CID 0x0004) through the Linux kernel's own L2CAP:
/// an `AF_BLUETOOTH`, `SOCK_SEQPACKET`, `BTPROTO_L2CAP` socket with `l2_cid` set. This is
/// the kernel-assisted mode (`hci-raw:N`): the kernel owns the adapter, makes the LE
/// connection when the socket connects, drops it ~2 s after the last socket on it closes,
/// and runs SMP itself when ``SecurityLevel`` asks for more than `low`.
///
/// - One read is one whole SDU (one ATT PDU), one write sends one.
/// - Connecting is non-blocking with a deadline: `connect()` returns EINPROGRESS, the
///   socket turns writable when the link (and, at `medium` and above, encryption) is up,
///   and SO_ERROR tells how it went.
/// - A reader thread (the transports' ``DescriptorLoop``) hands SDUs to `receive`.
public final class KernelL2CAPSocket: Sendable {
    /// BT_SECURITY levels (the kernel's names). The kernel pairs or encrypts with a stored
    /// key as needed to reach the level before it lets data through.
    public enum SecurityLevel: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// No encryption.
        case low = 1
        /// Encrypted, keys may be unauthenticated (Just Works).
        case medium = 2
        /// Encrypted with authenticated (MITM-protected) keys.
        case high = 3
        /// Authenticated LE Secure Connections with 128-bit keys.
        case fips = 4

        public var description: String {
            switch self {
            case .low: "low"
            case .medium: "medium"
            case .high: "high"
            case .fips: "fips"
            }
        }
    }

    public let peer: DeviceAddress
    public let channel: ChannelIdentifier
    /// The adapter's address this socket is bound to, and its index (hciN).
    public let localAddress: BluetoothAddress
    public let adapter: Int
    /// The descriptor is the loop's: reached only through `withOpenDescriptor`, because once
    /// the link ends the loop closes it, and its number may by then be another socket's (the
    /// next central's, from the listener), whose link an option set here would change.
    private let loop: DescriptorLoop

    /// Takes ownership of `fd`, and closes it when it throws.
    init(fd: Int32, peer: DeviceAddress, channel: ChannelIdentifier, localAddress: BluetoothAddress, adapter: Int) throws(KernelSocketError) {
        self.adapter = adapter
        self.peer = peer
        self.channel = channel
        self.localAddress = localAddress
        do {
            loop = try DescriptorLoop(fd: fd, spec: nil, name: "l2cap:\(peer)")
        } catch {
            throw .system(operation: "start", errno: EIO, detail: error.description)
        }
    }

    /// Connects to `peer` on `channel` through adapter `adapter` (its index, hciN).
    ///
    /// The wait for the link (and for encryption when `security` is above `low`) runs on
    /// a thread of its own, so no task of the cooperative pool blocks on it.
    public static func connect(
        to peer: DeviceAddress,
        channel: ChannelIdentifier = .attributeProtocol,
        adapter: Int,
        security: SecurityLevel = .low,
        timeout: Duration = .seconds(10)
    ) async throws(KernelSocketError) -> KernelL2CAPSocket {
        let local = try adapterAddress(adapter)
        let result: Result<KernelL2CAPSocket, KernelSocketError> = await withCheckedContinuation { continuation in
            let started = PosixThread.start {
                continuation.resume(returning: Result { () throws(KernelSocketError) in
                    try connectBlocking(to: peer, channel: channel, local: local, adapter: adapter, security: security, timeout: timeout)
                })
            }
            if case let .failure(error) = started {
                continuation.resume(returning: .failure(.system(operation: "pthread_create", errno: error.code, detail: Posix.message(error.code))))
            } else if case let .success(thread) = started {
                pthread_detach(thread)
            }
        }
        return try result.get()
    }

    static func connectBlocking(
        to peer: DeviceAddress, channel: ChannelIdentifier, local: BluetoothAddress, adapter: Int,
        security: SecurityLevel, timeout: Duration
    ) throws(KernelSocketError) -> KernelL2CAPSocket {
        let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)
        // The kernel may pair before the socket connects: someone must confirm Just Works.
        let agent = security == .low ? nil : try startAgent(adapter)
        defer { agent?.close() }
        var attempts = 0
        while true {
            var aborted = false
            attempts += 1
            do throws(KernelSocketError) {
                return try attempt(to: peer, channel: channel, local: local, adapter: adapter, security: security, timeout: timeout, deadline: deadline, aborted: &aborted)
            } catch {
                // ECONNABORTED: the kernel put this socket on the link an earlier socket to
                // the peer left idle, and that link's teardown (~2 s after the last socket
                // closed) took it along: seen when tools ran back to back. A new socket
                // makes a new link (a few times at most, within the deadline).
                guard aborted, attempts < 3, MonotonicClock.nanoseconds() < deadline else { throw error }
            }
        }
    }

    /// One connect on a fresh socket; `aborted` tells when it failed with ECONNABORTED.
    static func attempt(
        to peer: DeviceAddress, channel: ChannelIdentifier, local: BluetoothAddress, adapter: Int,
        security: SecurityLevel, timeout: Duration, deadline: UInt64, aborted: inout Bool
    ) throws(KernelSocketError) -> KernelL2CAPSocket {
        let fd = try openBound(local: local, channel: channel)
        do throws(KernelSocketError) {
            try setSecurity(fd, security)
            guard Posix.setNonBlocking(fd) == nil else { throw KernelSocketError.system(operation: "fcntl", errno: errno, detail: Posix.message(errno)) }
            var address = socketAddress(peer.address, type: peer.type, channel: channel)
            let result = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
                }
            }
            if result != 0 {
                let code = errno
                guard code == EINPROGRESS || code == EAGAIN else {
                    aborted = code == ECONNABORTED
                    throw KernelSocketError.from(errno: code, operation: "connect", peer: peer)
                }
                let revents = Posix.wait(fd, for: Int16(POLLOUT), until: deadline)
                if revents == 0 { throw KernelSocketError.timedOut(peer: peer, waitingFor: security == .low ? "the LE connection" : "the LE connection and encryption (security \(security))", after: timeout) }
                if revents < 0 { throw KernelSocketError.from(errno: -revents, operation: "connect", peer: peer) }
                var pending: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &length) == 0 else {
                    throw KernelSocketError.from(errno: errno, operation: "getsockopt(SO_ERROR)", peer: peer)
                }
                if pending != 0 {
                    aborted = pending == ECONNABORTED
                    throw KernelSocketError.from(errno: pending, operation: "connect", peer: peer)
                }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        // Owns `fd` from here, also when it throws (it closed it then: closing it again
        // could close another thread's descriptor that took the number meanwhile).
        return try KernelL2CAPSocket(fd: fd, peer: peer, channel: channel, localAddress: local, adapter: adapter)
    }

    /// A socket bound to `local` on `channel`; closed again on failure.
    static func openBound(local: BluetoothAddress, channel: ChannelIdentifier) throws(KernelSocketError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_L2CAP)
        guard fd >= 0 else { throw .from(errno: errno, operation: "socket", peer: nil) }
        // The adapter's own address; its type only tells the kernel this is an LE socket.
        var address = socketAddress(local, type: .public, channel: channel)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .from(errno: code, operation: "bind", peer: nil)
        }
        return fd
    }

    static func socketAddress(_ address: BluetoothAddress, type: AddressType, channel: ChannelIdentifier) -> sockaddr_l2 {
        var socketAddress = sockaddr_l2()
        socketAddress.l2_family = sa_family_t(AF_BLUETOOTH)
        socketAddress.l2_cid = channel.rawValue.littleEndian
        switch type {
        case .public, .publicIdentity: socketAddress.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        case .random, .randomIdentity: socketAddress.l2_bdaddr_type = UInt8(BDADDR_LE_RANDOM)
        }
        withUnsafeMutableBytes(of: &socketAddress.l2_bdaddr) { raw in
            for (index, byte) in address.littleEndianBytes.enumerated() where index < raw.count { raw[index] = byte }
        }
        return socketAddress
    }

    static func adapterAddress(_ index: Int) throws(KernelSocketError) -> BluetoothAddress {
        let adapters: [AdapterInfo]
        do { adapters = try Adapters.list() } catch { throw .adapter(error.description) }
        guard let adapter = adapters.first(where: { $0.index == index }) else {
            let present = adapters.map(\.name).joined(separator: ", ")
            throw .adapter("no adapter hci\(index); adapters present: \(present.isEmpty ? "none" : present)")
        }
        guard adapter.isUp else {
            throw .adapter("hci\(index) is down: the kernel's L2CAP needs it up (bareble-central adapters --up \(index), or use hci:\(index))")
        }
        return adapter.address
    }

    static func startAgent(_ adapter: Int, responder: (any KernelPairingResponder)? = nil) throws(KernelSocketError) -> KernelPairingAgent {
        do { return try KernelPairingAgent.start(index: adapter, responder: responder) } catch {
            throw .adapter("cannot answer the kernel's pairing requests on hci\(adapter): \(error)")
        }
    }

    static func setSecurity(_ fd: Int32, _ level: SecurityLevel) throws(KernelSocketError) {
        var requested = bt_security()
        requested.level = level.rawValue
        guard setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &requested, socklen_t(MemoryLayout<bt_security>.size)) == 0 else {
            let code = errno
            // On a connected LE socket EINVAL is smp_conn_security refusing: the adapter has
            // no SMP (brought up without the management interface), or the link is already
            // at the level (a key the kernel holds encrypted it first: seen once in the
            // kernel lane, reported as no SMP), or it just went. Only the first is an error
            // here; a link gone fails the next send.
            if code == EINVAL, level != .low {
                if let current = security(fd), current.level.rawValue >= level.rawValue { return }
                throw .securityUnavailable
            }
            throw .from(errno: code, operation: "setsockopt(BT_SECURITY)", peer: nil)
        }
    }

    static func option(_ fd: Int32, _ name: Int32) -> UInt16? {
        var value: UInt16 = 0
        var length = socklen_t(MemoryLayout<UInt16>.size)
        guard getsockopt(fd, SOL_BLUETOOTH, name, &value, &length) == 0 else { return nil }
        return value
    }

    // MARK: The connected socket

    /// The largest SDU the kernel takes from us on this channel (BT_SNDMTU).
    public var sendMTU: UInt16? { loop.withOpenDescriptor { Self.option($0, BT_SNDMTU) } ?? nil }
    /// The largest SDU the kernel accepts from the peer for us (BT_RCVMTU).
    public var receiveMTU: UInt16? { loop.withOpenDescriptor { Self.option($0, BT_RCVMTU) } ?? nil }

    /// The link's security level now, as the kernel reports it.
    public var securityLevel: SecurityLevel? { security?.level }

    /// The link's security level and encryption key size (octets, 0 while unencrypted).
    /// On a connected socket the kernel reports the link's own (`hci_conn`) level and key
    /// size, so this follows a pairing or encryption the peer started, too.
    public var security: (level: SecurityLevel, keySize: UInt8)? { loop.withOpenDescriptor { Self.security($0) } ?? nil }

    static func security(_ fd: Int32) -> (level: SecurityLevel, keySize: UInt8)? {
        var security = bt_security()
        var length = socklen_t(MemoryLayout<bt_security>.size)
        guard getsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &security, &length) == 0,
            let level = SecurityLevel(rawValue: security.level)
        else { return nil }
        return (level, security.key_size)
    }

    /// The link's HCI connection handle (L2CAP_CONNINFO), nil when the kernel does not say.
    public var connectionHandle: UInt16? {
        loop.withOpenDescriptor { fd -> UInt16? in
            var information = l2cap_conninfo()
            var length = socklen_t(MemoryLayout<l2cap_conninfo>.size)
            guard getsockopt(fd, SOL_L2CAP, L2CAP_CONNINFO, &information, &length) == 0 else { return nil }
            return information.hci_handle
        } ?? nil
    }

    /// Raises the link's security on a connected socket: the kernel pairs (or encrypts
    /// with a stored key) and holds our writes meanwhile. Returns once the socket is
    /// writable again at `level`, or throws at the deadline. `responder` answers numeric
    /// comparison and passkey entry (`high`, `fips`; the kernel's IO capability, which
    /// decides the method, is the adapter's when the link was made); Just Works is
    /// confirmed without it.
    public func raiseSecurity(
        to level: SecurityLevel, timeout: Duration = .seconds(10), responder: (any KernelPairingResponder)? = nil
    ) async throws(KernelSocketError) {
        let agent = try Self.startAgent(adapter, responder: responder)
        defer { agent.close() }
        let peer = self.peer
        // Set on this link's socket and waited on through a duplicate of it, taken while it
        // is open: the wait may outlive the loop's descriptor (a link that ends closes it).
        let setting: Result<Int32, KernelSocketError>? = loop.withOpenDescriptor { fd in
            do throws(KernelSocketError) {
                try Self.setSecurity(fd, level)
            } catch {
                return .failure(error)
            }
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            return copy >= 0 ? .success(copy) : .failure(.system(operation: "fcntl(F_DUPFD_CLOEXEC)", errno: errno, detail: Posix.message(errno)))
        }
        guard let setting else { throw .securityFailed(peer: peer, level: level) }
        let fd = try setting.get()
        let result: Result<Void, KernelSocketError> = await withCheckedContinuation { continuation in
            let started = PosixThread.start {
                defer { Glibc.close(fd) }
                let deadline = MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(in: timeout)
                // While the kernel works on security the socket is "suspended": not writable.
                let revents = Posix.wait(fd, for: Int16(POLLOUT), until: deadline)
                if revents == 0 {
                    continuation.resume(returning: .failure(.timedOut(peer: peer, waitingFor: "security \(level) (pairing or encryption)", after: timeout)))
                } else if revents < 0 || revents & Int32(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    continuation.resume(returning: .failure(.securityFailed(peer: peer, level: level)))
                } else {
                    continuation.resume(returning: .success(()))
                }
            }
            if case let .success(thread) = started { pthread_detach(thread) } else {
                Glibc.close(fd)
                continuation.resume(returning: .failure(.system(operation: "pthread_create", errno: EAGAIN, detail: "cannot start a thread")))
            }
        }
        try result.get()
        guard let now = securityLevel, now.rawValue >= level.rawValue else { throw .securityFailed(peer: peer, level: level) }
    }

    /// Starts the reader: `receive` gets each SDU on the reader thread; `closed` once,
    /// with nil when the link ended normally.
    public func start(
        receive: @escaping @Sendable ([UInt8]) -> Void,
        closed: @escaping @Sendable (KernelSocketError?) -> Void
    ) throws(KernelSocketError) {
        let peer = self.peer
        do {
            try loop.start(chunk: { bytes, _ in
                if let bytes { receive(Array(bytes)) }
                return nil
            }, closed: { error in
                closed(error.map { error in
                    if let reason = Self.disconnectReason(error) { return .linkEnded(peer: peer, reason: reason) }
                    return .linkFailed(peer: peer, detail: error.description)
                })
            })
        } catch {
            throw .system(operation: "start", errno: EIO, detail: error.description)
        }
    }

    /// The HCI reason a failed read stands for when the kernel ended the link: it closes
    /// every channel of a link that ends with `bt_to_errno(reason)` (Linux
    /// net/bluetooth/lib.c), which folds 0x13-0x15 into ECONNRESET (the transports' "closed
    /// by peer"; read as 0x13, the peer's user ended it). nil for anything else.
    static func disconnectReason(_ error: TransportError) -> UInt8? {
        switch error {
        case .closedByPeer: 0x13  // ECONNRESET: remote user terminated (or low resources, power off)
        case .system(_, .read, ETIMEDOUT, _): 0x08  // connection timeout
        case .system(_, .read, ECONNABORTED, _): 0x16  // terminated by the local host
        default: nil
        }
    }

    /// Sends one SDU (waits up to `timeout` while the kernel holds writes, e.g. during
    /// pairing).
    public func send(_ sdu: [UInt8], timeout: Duration = .seconds(10)) throws(KernelSocketError) {
        let result: Result<Void, TransportError> = sdu.withUnsafeBytes { raw in
            do throws(TransportError) {
                try loop.write(raw, timeout: timeout)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case let .failure(error) = result { throw .linkFailed(peer: peer, detail: error.description) }
    }

    /// Closes the socket; the kernel drops the link when no other socket uses it.
    public func close() { loop.close() }
}
