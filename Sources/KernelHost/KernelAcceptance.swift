import BluetoothCore

/// The kernel's side of the peripheral role on `hci-raw:N`: a listening L2CAP socket on the
/// ATT channel (CID 4) of the adapter, and a management-channel agent that answers the
/// kernel's pairing questions while it lives (the kernel asks user space to confirm Just
/// Works unless the IO capability is no-input-no-output; numeric comparison and passkeys
/// go to the responder). The adapter's IO capability must be set before (the kernel copies
/// it into each link as the link is made).
///
/// Accepting is one task, one accept at a time; each wait has a deadline
/// (``acceptWait``) and is simply made again, so nothing waits unbounded and a quiet
/// adapter costs one wake-up an hour. ``close()`` ends the wait at once.
public final class KernelAcceptance: Sendable {
    /// How long one accept waits before it is made again.
    public static let acceptWait: Duration = .seconds(3600)

    public let listener: KernelL2CAPListener
    public let agent: KernelPairingAgent
    private let loop = Lock<Task<Void, Never>?>(nil)
    /// Handles for links whose HCI handle the kernel did not report: above the 12-bit
    /// range of real ones (Core Vol 4 Part E 5.4.2), so they never collide.
    private let syntheticHandles = Lock<UInt16>(0xF000)

    private init(listener: KernelL2CAPListener, agent: KernelPairingAgent) {
        self.listener = listener
        self.agent = agent
    }

    /// Listens on hci`adapter`'s ATT channel and starts its agent, `responder` answering
    /// what a person must.
    public static func open(adapter: Int, responder: (any KernelPairingResponder)?) throws(KernelSocketError) -> KernelAcceptance {
        let listener = try KernelL2CAPListener(adapter: adapter)
        do {
            return KernelAcceptance(listener: listener, agent: try KernelL2CAPSocket.startAgent(adapter, responder: responder))
        } catch {
            listener.close()
            throw error
        }
    }

    /// Accepts centrals until ``close()``, handing each socket to `accepted`.
    public func start(_ accepted: @escaping @Sendable (KernelL2CAPSocket) -> Void) {
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
    public func handle(for socket: KernelL2CAPSocket) -> UInt16 {
        if let handle = socket.connectionHandle { return handle }
        return syntheticHandles.withLock { next in
            defer { next = next == .max ? 0xF000 : next + 1 }
            return next
        }
    }

    public func close() {
        loop.withLock { $0 }?.cancel()
        listener.close()
        agent.close()
    }
}
