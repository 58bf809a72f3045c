import Glibc
import HCITransport
@testable import KernelHost
import Testing

/// A kernel L2CAP socket whose link the kernel ended fails its read with the errno the
/// kernel made of the HCI reason (`bt_to_errno`); the reader's error, as the transports
/// word it, is read back into that reason.
@Suite struct KernelSocketReason {
    @Test("ECONNRESET (closed by peer) is 0x13, ETIMEDOUT 0x08, ECONNABORTED 0x16; other failures keep no reason")
    func readErrorsGiveTheReason() {
        let read = { (code: Int32) in TransportError.from(errno: code, operation: .read, spec: nil) }
        #expect(KernelL2CAPSocket.disconnectReason(read(ECONNRESET)) == 0x13)
        #expect(KernelL2CAPSocket.disconnectReason(read(ETIMEDOUT)) == 0x08)
        #expect(KernelL2CAPSocket.disconnectReason(read(ECONNABORTED)) == 0x16)
        for code in [EIO, ENOTCONN, EBADF, EHOSTDOWN] {
            #expect(KernelL2CAPSocket.disconnectReason(read(code)) == nil, "errno \(code)")
        }
        // A write's ETIMEDOUT is a deadline of ours, not the link's end.
        #expect(KernelL2CAPSocket.disconnectReason(TransportError.from(errno: ETIMEDOUT, operation: .write, spec: nil)) == nil)
        #expect(KernelSocketError.linkEnded(peer: .init(.zero, type: .public), reason: 0x13).description.hasSuffix("the link ended (HCI reason 0x13)"))
    }
}
