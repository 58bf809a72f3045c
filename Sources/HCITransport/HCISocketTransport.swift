import CBluetooth
import Glibc

/// Linux HCI sockets (AF_BLUETOOTH, BTPROTO_HCI). Every read returns one whole packet with
/// its indicator byte, and every write must be one whole packet.
public enum HCISocketTransport {
    /// `hci:N`: the user channel. The kernel's own stack lets go of the adapter entirely,
    /// so the device must be down; it is taken down here first. Exclusive: a second user
    /// (or bluetoothd holding the adapter) makes bind fail with EBUSY.
    public static func openUserChannel(index: Int, wait: ReaderWait = .blocking) throws(TransportError) -> DescriptorTransport {
        let spec = TransportSpec.hciUser(index: index)
        let fd = try HCISocket.open(spec: spec)
        // EALREADY means "already down"; any other failure is reported by bind, which
        // names the real problem (EBUSY, EPERM, ENODEV) better than HCIDEVDOWN does.
        _ = bareble_ioctl_int(fd, bareble_HCIDEVDOWN(), Int32(index))
        try HCISocket.bind(fd, index: index, channel: bareble_HCI_CHANNEL_USER(), spec: spec)
        let loop = try DescriptorLoop(fd: fd, spec: spec, name: spec.description, wait: wait)
        return DescriptorTransport(loop: loop, framing: .packetPerRead)
    }

    /// `hci-raw:N`: the raw channel, beside the kernel's stack on an up device. The kernel
    /// copies every packet that passes `filter` to this socket (so a narrow filter costs
    /// the kernel and us nothing for the rest); commands we send join the kernel's own
    /// command queue. Sending most commands needs CAP_NET_RAW.
    public static func openRawChannel(index: Int, filter: HCIRawFilter = .hostSideLE, wait: ReaderWait = .blocking) throws(TransportError) -> DescriptorTransport {
        let spec = TransportSpec.hciRaw(index: index)
        let fd = try HCISocket.open(spec: spec)
        try HCISocket.bind(fd, index: index, channel: bareble_HCI_CHANNEL_RAW(), spec: spec)
        var kernelFilter = filter.kernelValue
        guard setsockopt(fd, Int32(SOL_HCI), Int32(HCI_FILTER), &kernelFilter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TransportError.from(errno: code, operation: .setFilter, spec: spec, context: .current())
        }
        let loop = try DescriptorLoop(fd: fd, spec: spec, name: spec.description, wait: wait)
        return DescriptorTransport(loop: loop, framing: .packetPerRead, kernelAdapter: index)
    }
}

/// The socket calls every HCI channel shares (the kernel host's management channel too).
package enum HCISocket {
    package static func open(spec: TransportSpec?) throws(TransportError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw TransportError.from(errno: errno, operation: .socket, spec: spec) }
        return fd
    }

    /// Binds `fd` to hci`index` (or HCI_DEV_NONE) on `channel`; closes it on failure.
    package static func bind(_ fd: Int32, index: Int, channel: UInt16, spec: TransportSpec) throws(TransportError) {
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(truncatingIfNeeded: index)
        address.hci_channel = channel
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            // The adapter list only matters for ENODEV, and listing needs a socket.
            let context = code == ENODEV ? ErrorContext.current() : ErrorContext(executable: ErrorContext.executablePath() ?? "PATH")
            throw TransportError.from(errno: code, operation: .bind, spec: spec, context: context)
        }
    }
}
