import ATT
import BluetoothCore
import HCI
import L2CAP
import SMP
import Synchronization

/// A link the kernel made (`hci-raw:N`): ATT over its L2CAP LE socket on the ATT channel.
/// The kernel owns the connection and SMP, so security is raised with BT_SECURITY and the
/// kernel pairs (or uses a key it holds); the link ends when the socket closes.
final class KernelLink: PeripheralLink {
    let socket: KernelL2CAPSocket
    let bearer: any ATTBearer
    /// The level ``secure(explicit:)`` asks for: what the pairing configuration demands.
    let level: KernelL2CAPSocket.SecurityLevel
    let securityTimeout: Duration
    /// Set once the ATT client exists: its bearer's end is the link's end.
    private let att = Mutex<ATTClient?>(nil)

    init(socket: KernelL2CAPSocket, pairing: PairingConfiguration, securityTimeout: Duration = .seconds(30)) {
        self.socket = socket
        bearer = KernelSocketBearer(socket: socket)
        level = Self.level(for: pairing)
        self.securityTimeout = securityTimeout
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
        do { try await socket.raiseSecurity(to: level, timeout: securityTimeout) } catch { throw .kernelSocket(error) }
        return .kernel(level: "\(socket.securityLevel ?? level)")
    }

    func close() {}
}
