import ATT
import BluetoothCore
import KernelHost
import L2CAP

/// Where a ``PeripheralHost``'s links come from, as the Central's `Host` says.
enum LinkSource: Sendable {
    /// Our own host: the ``Connector``'s acceptor hands each connection over; our L2CAP and
    /// SMP run on it.
    case controller(ControllerHost)
    /// `hci-raw:N`: the kernel makes the links, its ATT listener hands each one's ATT
    /// channel over, the kernel runs SMP (``KernelAcceptance``).
    case kernel(KernelAcceptance)
}

extension PeripheralHost {
    /// The kernel's listener and pairing agent for hci`adapter`, after the adapter was given
    /// the policy's IO capability (the kernel copies it into each link as it is made).
    static func kernelAcceptance(adapter: Int, policy: SecurityPolicy) throws(PeripheralHostError) -> KernelAcceptance {
        if policy.privacy {
            throw .invalidOptions("privacy on hci-raw:\(adapter): the kernel's SMP pairs against the adapter's own address and knows nothing of our RPA; use the user channel (hci:\(adapter)) for privacy")
        }
        do { try KernelLink.giveIOCapability(adapter: adapter, policy) } catch { throw .kernel(error) }
        do { return try KernelAcceptance.open(adapter: adapter, responder: KernelLink.responder(for: policy)) } catch { throw .kernel(error) }
    }

    /// A central's ATT channel from the kernel's listener (on the accepting task): a
    /// ``KernelLink`` with the server attached; the link's security is read from the socket
    /// before each PDU, and a change reaches the server and the event stream. Over the
    /// limit the socket is closed at once (the kernel drops the link ~2 s later).
    func accept(_ socket: KernelL2CAPSocket, handle: UInt16) {
        guard !admission().over else {
            socket.close()
            reportRefused(socket.peer, why: "\(options.maximumLinks) centrals are connected already (maximumLinks)")
            return
        }
        let link = KernelLink(socket: socket, security: central.security, handle: handle)
        let remote = register(link) { link in link.socket.close() }
        link.observeSecurity { [weak self, weak remote, weak link] in
            guard let self, let remote, let link else { return }
            remote.securityChanged(pairedWith: nil)
            emit(.encryptionChanged(remote, encrypted: link.isEncrypted))
        }
    }
}
