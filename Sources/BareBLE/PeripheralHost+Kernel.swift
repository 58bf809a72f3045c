import ATT
import BluetoothCore
import HCI
import HCITransport
import L2CAP
import SMP

/// Where a ``PeripheralHost``'s links come from.
enum LinkSource: Sendable {
    /// Our own host: the ``Connector``'s acceptor hands each connection over; our L2CAP and
    /// SMP run on it.
    case host(ChannelManager, Connector)
    /// `hci-raw:N`: the kernel makes the links, its ATT listener hands each one's ATT
    /// channel over, the kernel runs SMP.
    case kernel(KernelAcceptance)
}

/// The kernel's side of the peripheral role on `hci-raw:N`: a listening L2CAP socket on the
/// ATT channel (CID 4) of the adapter, and a management-channel agent that answers the
/// kernel's pairing questions while the host lives (the kernel asks user space to confirm
/// Just Works unless the IO capability is no-input-no-output; numeric comparison and
/// passkeys go to the policy's delegate). The adapter's IO capability is set from the
/// policy first: the kernel copies it into each link as the link is made.
///
/// Accepting is one task, one accept at a time; each wait has a deadline
/// (``acceptWait``) and is simply made again, so nothing waits unbounded and a quiet
/// adapter costs one wake-up an hour. ``close()`` ends the wait at once.
final class KernelAcceptance: Sendable {
    /// How long one accept waits before it is made again.
    static let acceptWait: Duration = .seconds(3600)

    let listener: KernelL2CAPListener
    let agent: KernelPairingAgent
    private let loop = Lock<Task<Void, Never>?>(nil)
    /// Handles for links whose HCI handle the kernel did not report: above the 12-bit
    /// range of real ones (Core Vol 4 Part E 5.4.2), so they never collide.
    private let syntheticHandles = Lock<UInt16>(0xF000)

    private init(listener: KernelL2CAPListener, agent: KernelPairingAgent) {
        self.listener = listener
        self.agent = agent
    }

    static func open(adapter: Int, policy: SecurityPolicy) throws(PeripheralHostError) -> KernelAcceptance {
        if policy.privacy {
            throw .invalidOptions("privacy on hci-raw:\(adapter): the kernel's SMP pairs against the adapter's own address and knows nothing of our RPA; use the user channel (hci:\(adapter)) for privacy")
        }
        do { try KernelLink.giveIOCapability(adapter: adapter, policy) } catch { throw .kernel(error) }
        let listener: KernelL2CAPListener
        do { listener = try KernelL2CAPListener(adapter: adapter) } catch { throw .kernel(error) }
        let agent: KernelPairingAgent
        do {
            agent = try KernelPairingAgent.start(index: adapter, responder: KernelLink.responder(for: policy))
        } catch {
            listener.close()
            throw .kernel(.adapter("cannot answer the kernel's pairing requests on hci\(adapter): \(error)"))
        }
        return KernelAcceptance(listener: listener, agent: agent)
    }

    /// Accepts centrals until ``close()``, handing each socket to `accepted`.
    func start(_ accepted: @escaping @Sendable (KernelL2CAPSocket) -> Void) {
        let listener = self.listener
        let task = Task {
            while !Task.isCancelled {
                do throws(KernelSocketError) {
                    accepted(try await listener.accept(timeout: Self.acceptWait))
                } catch .timedOut {
                    continue
                } catch {
                    // Closed, or the adapter went away: nothing more will come.
                    return
                }
            }
        }
        loop.withLock { $0 = task }
    }

    /// The link's HCI handle as the kernel reports it, else one of our own.
    func handle(for socket: KernelL2CAPSocket) -> UInt16 {
        if let handle = socket.connectionHandle { return handle }
        return syntheticHandles.withLock { next in
            defer { next = next == .max ? 0xF000 : next + 1 }
            return next
        }
    }

    func close() {
        loop.withLock { $0 }?.cancel()
        listener.close()
        agent.close()
    }
}

extension PeripheralHost {
    /// A central's ATT channel from the kernel's listener (on the accepting task): a
    /// ``KernelLink`` with the server attached; the link's security is read from the socket
    /// before each PDU, and a change reaches the server and the event stream. Over the
    /// limit the socket is closed at once (the kernel drops the link ~2 s later).
    func accept(_ socket: KernelL2CAPSocket) {
        guard case let .kernel(acceptance) = source else { return socket.close() }
        guard !admission().over else {
            socket.close()
            reportRefused(socket.peer, why: "\(options.maximumLinks) centrals are connected already (maximumLinks)")
            return
        }
        let link = KernelLink(socket: socket, security: central.security, handle: acceptance.handle(for: socket))
        let remote = register(link, attached: link.attach) { link in link.socket.close() }
        link.observeSecurity { [weak self, weak remote, weak link] in
            guard let self, let remote, let link else { return }
            remote.securityChanged(pairedWith: nil)
            emit(.encryptionChanged(remote, encrypted: link.isEncrypted))
        }
    }
}
