import ATT
@testable import BareBLE
import BluetoothCore
import Glibc
@testable import KernelHost
import L2CAP
import Testing
import TestSupport

/// On `hci-raw:N` a link's security level is read before every PDU the central sends (the
/// kernel announces no change), and whoever watches it is looked up each time. A closure
/// kept bare in a `Lock` comes back from every `withLock { $0 }` wrapped in two more
/// reabstraction thunks (out of the generic value and back into it): the lookup grew the
/// link's memory by two heap objects per PDU, kept for the link's life, and released as one
/// chain as deep as the link was busy, which overflowed the stack (signal 11 here before the
/// fix; the same bug as the manager's hooks before 7aa8822).
/// The link here is a KernelLink over a local SEQPACKET socket pair standing in for the
/// kernel's L2CAP socket (its level cannot be read there: it stays unknown, no change is
/// ever told).
@Suite struct KernelLinkObserverTests {
    @Test("200,000 PDUs through a watched kernel link: the watch does not grow with them, so the link is released without overflowing the stack")
    func watchingCostsNothingPerPDU() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        let peer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0201), type: .random)
        let socket = try KernelL2CAPSocket(fd: fds[0], peer: peer, channel: .attributeProtocol, localAddress: .zero, adapter: 0)
        let pdus = 200_000
        let told = Lock(0)
        var link: KernelLink? = KernelLink(socket: socket, security: SecurityPolicy())
        link?.observeSecurity { told.withLock { $0 += 1 } }
        let (delivered, counting) = AsyncStream.makeStream(of: Void.self)
        let received = Lock(0)
        link?.bearer.start(
            receive: { _ in if received.withLock({ $0 += 1; return $0 }) == pdus { counting.finish() } },
            oversized: { _, _ in }, closed: { _ in counting.finish() })
        let writer = fds[1]
        try await withDeadline("\(pdus) PDUs written and delivered", seconds: 60) {
            try await onOwnThread {
                // A Read Request, over and over: the writer blocks while the reader catches up.
                let pdu: [UInt8] = [0x0A, 0x01, 0x00]
                for _ in 0..<pdus { _ = pdu.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } }
            }
            for await _ in delivered {}
        }
        #expect(received.withLock { $0 } == pdus)
        #expect(told.withLock { $0 } == 0)
        link?.bearer.close(reason: .closedByHost)
        link = nil
        close(writer)
    }
}
