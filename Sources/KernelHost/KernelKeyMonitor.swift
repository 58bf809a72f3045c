import BluetoothCore
import CBluetooth
import Glibc
import HCITransport
import Synchronization

/// Listens on the management channel for the keys the kernel reports for one adapter
/// (``KernelKeyEvent``) while it lives, so a host without a daemon can keep them. The
/// kernel sends key events only to trusted sockets (CAP_NET_ADMIN).
///
/// `handler` runs on the reader thread, one event at a time: it must hand the key on, not
/// write files there. A key event that does not decode is counted in ``malformed`` and
/// dropped; the monitor goes on.
public final class KernelKeyMonitor: Sendable {
    public let index: Int
    private let loop: DescriptorLoop
    private let malformedCount = Atomic(0)
    private let deliveredCount = Atomic(0)

    /// Starts listening for hci`index`'s key events until ``close()``.
    public static func start(index: Int, handler: @escaping @Sendable (KernelKeyEvent.Received) -> Void) throws(TransportError) -> KernelKeyMonitor {
        let spec = TransportSpec.hciRaw(index: index)
        let fd = try HCISocket.open(spec: spec)
        try HCISocket.bind(fd, index: Int(bareble_HCI_DEV_NONE()), channel: bareble_HCI_CHANNEL_CONTROL(), spec: spec)
        return try start(index: index, loop: try DescriptorLoop(fd: fd, spec: spec, name: "mgmt keys hci\(index)"), handler: handler)
    }

    /// Listens on `loop` (a test's socket pair stands in for the control channel).
    package static func start(index: Int, loop: DescriptorLoop, handler: @escaping @Sendable (KernelKeyEvent.Received) -> Void) throws(TransportError) -> KernelKeyMonitor {
        let monitor = KernelKeyMonitor(index: index, loop: loop)
        try loop.start(chunk: { [weak monitor] bytes, _ in
            if let bytes, let monitor, let received = monitor.decode(Array(bytes)) {
                monitor.deliveredCount.add(1, ordering: .relaxed)
                handler(received)
            }
            return nil
        }, closed: { _ in })
        return monitor
    }

    private init(index: Int, loop: DescriptorLoop) {
        self.index = index
        self.loop = loop
    }

    /// Key events that failed to decode, and key events handed to the handler, so far.
    public var malformed: Int { malformedCount.load(ordering: .relaxed) }
    public var delivered: Int { deliveredCount.load(ordering: .relaxed) }

    public func close() { loop.close() }

    private func decode(_ bytes: [UInt8]) -> KernelKeyEvent.Received? {
        do throws(DecodeError) {
            guard let received = try KernelKeyEvent.decode(bytes), received.index == UInt16(truncatingIfNeeded: index) else { return nil }
            return received
        } catch {
            malformedCount.add(1, ordering: .relaxed)
            return nil
        }
    }
}
