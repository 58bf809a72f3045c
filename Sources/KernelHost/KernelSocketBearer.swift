import ATT
import BluetoothCore

/// The ATT bearer of the kernel-assisted mode: ATT PDUs over the kernel's L2CAP LE
/// socket on the ATT channel (``KernelL2CAPSocket``). The kernel made the connection and
/// runs SMP; this bearer only moves PDUs, so any ``ATTClient`` (and the GATT client above
/// it) works unchanged.
///
/// - The MTU: on the fixed ATT channel the kernel negotiates nothing itself (ATT's own
///   Exchange MTU does), but its socket has a receive and send limit; ``maximumMTU``
///   reports the smaller, so the client never offers or uses a larger ATT_MTU than the
///   kernel will carry.
/// - The socket closing (the link dropped, the peer went away) fails every pending request
///   at once; closing a dead bearer closes the socket, after which the kernel drops the
///   link (~2 s after its last socket is gone).
public final class KernelSocketBearer: ATTBearer {
    public let socket: KernelL2CAPSocket
    private let lifecycle = BearerLifecycle()
    private let currentMTU = Lock(ATTConstants.minimumLEMTU)
    private let limit: UInt16?
    private let willDeliver: (@Sendable () -> Void)?

    /// - Parameter willDeliver: told on the reader thread before each PDU is handed on.
    ///   The kernel announces no security change on a socket; a server reads the link's
    ///   level here, so every request is judged by the protection it arrived under.
    public init(socket: KernelL2CAPSocket, willDeliver: (@Sendable () -> Void)? = nil) {
        self.socket = socket
        self.willDeliver = willDeliver
        let limits = [socket.receiveMTU, socket.sendMTU].compactMap { $0 }.filter { $0 >= ATTConstants.minimumLEMTU }
        limit = limits.min()
    }

    public func start(
        receive: @escaping @Sendable ([UInt8]) -> Void,
        oversized _: @escaping @Sendable (ATTOpcode?, Int) -> Void,
        closed: @escaping @Sendable (ATTBearerError) -> Void
    ) {
        guard lifecycle.start(closed: closed) else { return }
        do {
            let willDeliver = self.willDeliver
            try socket.start(receive: { pdu in
                willDeliver?()
                receive(pdu)
            }, closed: { [weak self] error in
                // The socket's errno stands for the HCI reason when the kernel ended the
                // link; an end of file gives none, and 0x08 (connection timeout) is the
                // honest stand-in for "the link went away under us".
                let reason: ATTBearerError = switch error {
                case nil: .disconnected(reason: 0x08)
                case let .linkEnded(_, reason)?: .disconnected(reason: reason)
                case let other?: .failed(other.description)
                }
                self?.lifecycle.end(reason)
            })
        } catch {
            end(.failed(error.description))
        }
    }

    /// The bearer failed on our side: the client hears it, and the socket closes (the
    /// client's tear-down does not close a bearer that ended itself, and an open socket
    /// would keep its reader thread and the kernel's link).
    private func end(_ reason: ATTBearerError) {
        lifecycle.end(reason)
        socket.close()
    }

    public func send(_ pdu: [UInt8]) throws(ATTBearerError) {
        if let reason = lifecycle.reason { throw reason }
        do {
            try socket.send(pdu)
        } catch {
            end(.failed(error.description))
            throw .failed(error.description)
        }
    }

    public var mtu: UInt16 { currentMTU.withLock { $0 } }
    public var mtuIsNegotiatedBelow: Bool { false }
    /// The kernel socket's SDU limit (min of BT_RCVMTU and BT_SNDMTU), when it reports one.
    public var maximumMTU: UInt16? { limit }

    public func mtuExchanged(_ mtu: UInt16) {
        currentMTU.withLock { $0 = min(mtu, limit ?? mtu) }
    }

    /// Closes the socket, also after the bearer ended (closing it twice does nothing).
    public func close(reason: ATTBearerError) {
        _ = lifecycle.close(reason)
        socket.close()
    }
}
