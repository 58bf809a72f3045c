import ATT
import BluetoothCore
import HCI
import KernelHost
import L2CAP
import SMP

/// A link the kernel made (`hci-raw:N`): ATT over its L2CAP LE socket on the ATT channel,
/// one we connected as central or one a central made to us that the kernel's ATT listener
/// handed over. The kernel owns the connection and SMP, so security is raised with
/// BT_SECURITY and the kernel pairs (or uses a key it holds); the link ends when the
/// socket closes.
///
/// The kernel tells a socket nothing when the peer pairs or encrypts: the level is read
/// from the socket before each PDU is handed on (``observeSecurity(_:)``), so a server
/// judges every request by the protection it arrived under.
final class KernelLink: PeripheralLink {
    let socket: KernelL2CAPSocket
    let bearer: any ATTBearer
    /// The HCI handle the kernel reports for the link (for an accepted link; 0 otherwise).
    let handle: UInt16
    /// The level last read from the socket, and who is told when it moves.
    private let observedLevel: Lock<KernelL2CAPSocket.SecurityLevel?>
    private let securityObserver: Lock<SecurityObserver>
    /// The level ``secure(explicit:)`` asks for: what the pairing configuration demands.
    let level: KernelL2CAPSocket.SecurityLevel
    let securityTimeout: Duration
    /// Answers the kernel's numeric comparison and passkey questions (the policy's delegate).
    let responder: (any KernelPairingResponder)?
    /// Set once the ATT client exists: its bearer's end is the link's end.
    private let att = Lock<ATTClient?>(nil)
    /// Where the kernel's keys are kept (a link we connected, with a bond store).
    let bonds: KernelBonds?

    init(socket: KernelL2CAPSocket, security: SecurityPolicy, bonds: KernelBonds? = nil, handle: UInt16 = 0, securityTimeout: Duration = .seconds(30)) {
        self.socket = socket
        self.handle = handle
        self.bonds = bonds
        let observedLevel = Lock(socket.securityLevel)
        let observer = Lock(SecurityObserver())
        self.observedLevel = observedLevel
        securityObserver = observer
        bearer = KernelSocketBearer(socket: socket, willDeliver: { Self.checkSecurity(socket, observedLevel, observer) })
        level = Self.level(for: security.pairing)
        responder = Self.responder(for: security)
        self.securityTimeout = securityTimeout
    }

    /// Connects the ATT socket to `peer` through hci`adapter`, after telling the kernel
    /// the policy's IO capability: the kernel fixes a link's IO capability (and so the
    /// pairing method) when the link is made.
    /// A peer bonded in the store gets its link encrypted at once (unless the policy says
    /// otherwise), with the key loaded into the kernel: at `high` when the bond is
    /// authenticated, else `medium`. A key the peer lost fails here, never as a plaintext
    /// link.
    static func connect(
        to peer: DeviceAddress, adapter: Int, security: SecurityPolicy, bonds: KernelBonds?, timeout: Duration
    ) async throws(PeripheralError) -> KernelLink {
        do { try giveIOCapability(adapter: adapter, security) } catch { throw .kernelSocket(error) }
        let socket: KernelL2CAPSocket
        do {
            socket = try await KernelL2CAPSocket.connect(to: peer, adapter: adapter, security: .low, timeout: timeout)
        } catch {
            throw .kernelSocket(error)
        }
        let link = KernelLink(socket: socket, security: security, bonds: bonds)
        if security.encryptsBondedPeersAtConnect, let bond = link.storedBond, bonds != nil {
            do {
                try await socket.raiseSecurity(to: bond.authenticated ? .high : .medium, timeout: link.securityTimeout, responder: link.responder)
            } catch {
                socket.close()
                throw .kernelSocket(error)
            }
        }
        return link
    }

    /// Whether the kernel pairs to reach `level` when it holds `bond`'s key (and nothing
    /// better): `high` needs an authenticated key, `fips` an authenticated Secure
    /// Connections one.
    static func pairs(with bond: Bond?, at level: KernelL2CAPSocket.SecurityLevel) -> Bool {
        guard let bond else { return true }
        switch level {
        case .fips: return !(bond.authenticated && bond.secureConnections)
        case .high: return !bond.authenticated
        default: return false
        }
    }

    /// The store's bond with an LTK for this peer, which the kernel was given.
    var storedBond: Bond? {
        guard let bond = bonds?.store.bond(for: peer), bond.peerKeys.longTermKey != nil || bond.localKeys.longTermKey != nil else { return nil }
        return bond
    }

    /// Tells hci`adapter`'s kernel the policy's IO capability: the kernel copies it into a
    /// link as the link is made, and it decides how the kernel pairs.
    static func giveIOCapability(adapter: Int, _ security: SecurityPolicy) throws(KernelSocketError) {
        do {
            try KernelManagement.setIOCapability(index: adapter, security.pairing.ioCapability.rawValue)
        } catch where security.pairing.ioCapability != .noInputNoOutput {
            throw .adapter("cannot give hci\(adapter)'s kernel our IO capability (\(security.pairing.ioCapability)), "
                + "which decides how it pairs: \(error) (the management interface needs CAP_NET_ADMIN)")
        } catch {
            // No input, no output is the kernel's own default, and a socket connects
            // without CAP_NET_ADMIN: not being able to say it again is no failure.
        }
    }

    /// The policy's delegate as the answerer of the kernel's pairing questions.
    static func responder(for security: SecurityPolicy) -> (any KernelPairingResponder)? {
        security.delegate.map(DelegateResponder.init)
    }

    /// BT_SECURITY for a configuration: `fips` for Secure Connections Only, `high` when
    /// MITM protection is asked for, else `medium` (encrypted, Just Works allowed).
    static func level(for pairing: PairingConfiguration) -> KernelL2CAPSocket.SecurityLevel {
        if pairing.secureConnectionsOnly { return .fips }
        return pairing.mitm || pairing.requireMITM ? .high : .medium
    }

    /// The link's end is its client's: kept to read it.
    func makeATTClient(server: ATTServer?) -> ATTClient {
        let client = ATTClient(bearer: bearer, server: server)
        att.withLock { $0 = client }
        return client
    }

    /// Who is told when the level moves, read before every PDU. In a struct: a closure kept
    /// bare in a `Lock` comes back from every `withLock { $0 }` wrapped in two more
    /// reabstraction thunks, so each PDU grew a chain the link kept until its end, whose
    /// release then overflowed the stack (200,000 PDUs: signal 11).
    struct SecurityObserver: Sendable {
        var changed: (@Sendable () -> Void)?
    }

    /// `changed` is told (on the reader thread, before the PDU that revealed it is handed
    /// on) whenever the link's security level differs from the last one read; checked
    /// once at once, for a change before the observer was in place.
    func observeSecurity(_ changed: @escaping @Sendable () -> Void) {
        securityObserver.withLock { $0.changed = changed }
        Self.checkSecurity(socket, observedLevel, securityObserver)
    }

    private static func checkSecurity(
        _ socket: KernelL2CAPSocket, _ observed: Lock<KernelL2CAPSocket.SecurityLevel?>, _ observer: Lock<SecurityObserver>
    ) {
        // A link nobody watches (ours as central) skips the system call.
        guard let changed = observer.withLock({ $0.changed }) else { return }
        let now = socket.securityLevel
        let moved = observed.withLock { last in
            defer { last = now }
            return last != now
        }
        if moved { changed() }
    }

    var connection: Connection? { nil }
    var peer: DeviceAddress { socket.peer }
    var isConnected: Bool { att.withLock { $0?.closedReason } == nil }
    var disconnectReason: HCIErrorCode? { att.withLock { $0?.closedReason }.map(Self.reason) }
    var isEncrypted: Bool { (socket.securityLevel?.rawValue ?? 0) >= KernelL2CAPSocket.SecurityLevel.medium.rawValue }

    /// The kernel's level as ATT permissions see it: `medium` encrypted, `high`
    /// authenticated, `fips` authenticated LE Secure Connections (the kernel's name for an
    /// authenticated SC key of 16 octets). A `medium` or `high` key may come from Secure
    /// Connections too; the socket does not say, so "Secure Connections only" attributes
    /// need `fips`. Whether the kernel holds a key for the central is not told either: an
    /// unencrypted link answers Insufficient Authentication (0x05), and the central pairs
    /// or encrypts as it sees fit.
    var linkSecurity: ATTLinkSecurity {
        guard let (level, keySize) = socket.security, level.rawValue >= KernelL2CAPSocket.SecurityLevel.medium.rawValue else { return .open }
        return ATTLinkSecurity(
            isEncrypted: true, isAuthenticated: level.rawValue >= KernelL2CAPSocket.SecurityLevel.high.rawValue,
            isSecureConnections: level == .fips, keySize: keySize == 0 ? 16 : keySize)
    }

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

    /// Raises the socket's level; the kernel pairs unless it holds a good enough key. With
    /// no stored key for the peer, or one too weak for the level, a pairing is expected,
    /// so this waits for its LTK to be kept (the kernel reports keys as distribution ends,
    /// after the link is encrypted and the socket released): a tool that exits right
    /// after must not lose the bond.
    func secure(explicit: Bool) async throws(PeripheralError) -> SecurityOutcome {
        let expectation = Self.pairs(with: storedBond, at: level) ? bonds?.expectLongTermKey() : nil
        do {
            try await socket.raiseSecurity(to: level, timeout: securityTimeout, responder: responder)
        } catch {
            if let expectation { bonds?.forget(expectation) }
            throw .kernelSocket(error)
        }
        if let expectation, let bonds {
            do { _ = try await bonds.longTermKeyKept(expectation) } catch { throw .bondNotSaved(error) }
        }
        return .kernel(level: "\(socket.securityLevel ?? level)")
    }

    func close() {}
}

extension KernelLink: AcceptedLink {
    /// The kernel keeps its keys: no bond of ours names the central.
    var identity: DeviceAddress { peer }
    /// The kernel pairs.
    var securityManager: SecurityManager? { nil }

    func requestConnectionParameters(
        _ request: ConnectionParameterUpdateRequest, timeout: Duration
    ) async throws(PeripheralError) -> RemoteCentral.ParameterUpdate {
        throw .notSupported("on hci-raw the kernel owns the connection and offers a socket no way to ask for connection parameters: use the user channel (hci:N) for this")
    }
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
