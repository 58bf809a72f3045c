import ATT
import BluetoothCore
import Glibc
import HCITransport
@testable import KernelHost
import Testing
import TestSupport

/// Who closes a kernel socket's descriptor, over a socket pair standing in for the kernel's
/// L2CAP socket: exactly one owner, and never a number that may be another file's by now.
@Suite struct KernelSocketOwnershipTests {
    /// A connected pair: ours for the socket, the other end to watch it from.
    static func pair() throws -> (ours: Int32, theirs: Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    /// Whether the other end sees its peer closed (10 s at most: a loaded machine's slack).
    static func closedByPeer(_ theirs: Int32) -> Bool {
        var poller = pollfd(fd: theirs, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 10_000) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(theirs, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    static func socket(_ fd: Int32) throws -> KernelL2CAPSocket {
        try KernelL2CAPSocket(
            fd: fd, peer: DeviceAddress(BluetoothAddress(0xC0_0000_0001), type: .random), channel: .attributeProtocol,
            localAddress: BluetoothAddress(0xF0_0D00_0000_01), adapter: 0)
    }

    @Test func aBearerThatEndsOnItsOwnClosesItsSocket() throws {
        let (ours, theirs) = try Self.pair()
        defer { close(theirs) }
        let socket = try Self.socket(ours)
        // Someone else already started the socket: the bearer's start fails, and it ends.
        try socket.start(receive: { _ in }, closed: { _ in })
        let bearer = KernelSocketBearer(socket: socket)
        let ended = Lock<ATTBearerError?>(nil)
        bearer.start(receive: { _ in }, oversized: { _, _ in }, closed: { reason in ended.withLock { $0 = reason } })
        #expect(ended.withLock { $0 } != nil)
        // The client's tear-down never closes a bearer that ended itself: the socket (its
        // reader thread, the kernel's link) must close now.
        #expect(Self.closedByPeer(theirs))
    }

    @Test func aClosedLoopLendsNoDescriptorAndAnUnstartedOneClosesItsOwn() throws {
        let (ours, theirs) = try Self.pair()
        defer { close(theirs) }
        let loop = try DescriptorLoop(fd: ours, spec: nil, name: "test")
        #expect(loop.withOpenDescriptor { $0 } == ours)
        loop.close()
        #expect(loop.withOpenDescriptor { $0 } == nil)
        #expect(Self.closedByPeer(theirs))

        let (again, other) = try Self.pair()
        defer { close(other) }
        do { _ = try DescriptorLoop(fd: again, spec: nil, name: "never started") }
        // Released without start or close: its descriptor goes with it.
        #expect(Self.closedByPeer(other))
    }
}
