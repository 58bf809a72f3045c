import ATT
import BluetoothCore
import HCI
import HCITransport
import L2CAP
import SMP

/// A link the kernel made (`hci-raw:N`): ATT over its L2CAP LE socket on the ATT channel.
/// The kernel owns the connection and SMP, so security is raised with BT_SECURITY and the
/// kernel pairs (or uses a key it holds); the link ends when the socket closes.
final class KernelLink: PeripheralLink {
    let socket: KernelL2CAPSocket
    let bearer: any ATTBearer
    /// The level ``secure(explicit:)`` asks for: what the pairing configuration demands.
    let level: KernelL2CAPSocket.SecurityLevel
    let securityTimeout: Duration
    /// Answers the kernel's numeric comparison and passkey questions (the policy's delegate).
    let responder: (any KernelPairingResponder)?
    /// Set once the ATT client exists: its bearer's end is the link's end.
    private let att = Lock<ATTClient?>(nil)

    init(socket: KernelL2CAPSocket, security: SecurityPolicy, securityTimeout: Duration = .seconds(30)) {
        self.socket = socket
        bearer = KernelSocketBearer(socket: socket)
        level = Self.level(for: security.pairing)
        responder = security.delegate.map(DelegateResponder.init)
        self.securityTimeout = securityTimeout
    }

    /// Connects the ATT socket to `peer` through hci`adapter`, after telling the kernel
    /// the policy's IO capability: the kernel fixes a link's IO capability (and so the
    /// pairing method) when the link is made.
    static func connect(to peer: DeviceAddress, adapter: Int, security: SecurityPolicy, timeout: Duration) async throws(PeripheralError) -> KernelLink {
        do {
            try KernelManagement.setIOCapability(index: adapter, security.pairing.ioCapability.rawValue)
        } catch where security.pairing.ioCapability != .noInputNoOutput {
            throw .kernelSocket(.adapter("cannot give hci\(adapter)'s kernel our IO capability (\(security.pairing.ioCapability)), "
                + "which decides how it pairs: \(error) (the management interface needs CAP_NET_ADMIN)"))
        } catch {
            // No input, no output is the kernel's own default, and a socket connects
            // without CAP_NET_ADMIN: not being able to say it again is no failure.
        }
        do {
            let socket = try await KernelL2CAPSocket.connect(to: peer, adapter: adapter, security: .low, timeout: timeout)
            return KernelLink(socket: socket, security: security)
        } catch {
            throw .kernelSocket(error)
        }
    }

    /// BT_SECURITY for a configuration: `fips` for Secure Connections Only, `high` when
    /// MITM protection is asked for, else `medium` (encrypted, Just Works allowed).
    static func level(for pairing: PairingConfiguration) -> KernelL2CAPSocket.SecurityLevel {
        if pairing.secureConnectionsOnly { return .fips }
        return pairing.mitm || pairing.requireMITM ? .high : .medium
    }

    func attach(_ client: ATTClient) { att.withLock { $0 = client } }

    var connection: Connection? { nil }
    var peer: DeviceAddress { socket.peer }
    var isConnected: Bool { att.withLock { $0?.closedReason } == nil }
    var disconnectReason: HCIErrorCode? { att.withLock { $0?.closedReason }.map(Self.reason) }
    var isEncrypted: Bool { (socket.securityLevel?.rawValue ?? 0) >= KernelL2CAPSocket.SecurityLevel.medium.rawValue }

    /// The socket gives no HCI reason: a host close reads as 0x16, the rest as the
    /// bearer reports it.
    static func reason(_ error: ATTBearerError) -> HCIErrorCode {
        switch error {
        case let .disconnected(reason): HCIErrorCode(rawValue: reason)
        case .closedByHost: .connectionTerminatedByLocalHost
        default: .unspecifiedError
        }
    }

    func disconnect() async throws(PeripheralError) {
        // Closing our socket lets the kernel drop the link (when no other socket uses it).
        guard let client = att.withLock({ $0 }) else { return socket.close() }
        client.close()
    }

    func disconnection() async throws(PeripheralError) -> HCIErrorCode {
        guard let client = att.withLock({ $0 }), let reason = await client.closure() else {
            throw .connection(.procedureCancelled("the end of the link to \(peer)"))
        }
        return Self.reason(reason)
    }

    func secure(explicit: Bool) async throws(PeripheralError) -> SecurityOutcome {
        do { try await socket.raiseSecurity(to: level, timeout: securityTimeout, responder: responder) } catch { throw .kernelSocket(error) }
        return .kernel(level: "\(socket.securityLevel ?? level)")
    }

    func close() {}
}

/// The policy's ``PairingDelegate`` answering the kernel's pairing questions.
private struct DelegateResponder: KernelPairingResponder {
    let delegate: any PairingDelegate

    func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool {
        await delegate.confirmNumericComparison(value, peer: peer)
    }

    func enterPasskey(peer: DeviceAddress) async -> UInt32? {
        await delegate.enterPasskey(peer: peer)
    }

    func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async {
        await delegate.displayPasskey(passkey, peer: peer)
    }
}
