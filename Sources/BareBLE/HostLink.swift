import ATT
import BluetoothCore
import Bonding
import Glibc
import HCI
import L2CAP
import SMP

/// A link on BareBLE's own host (user channel, H4, virtual radio), in either role: the HCI
/// ``Connection``, the ATT fixed channel of our L2CAP, and our SMP (``SecurityManager``,
/// initiator as central, responder as peripheral), whose bonding pairings are saved to the
/// policy's bond store as they end, whoever started them. ``Central`` builds one per
/// connection it makes, ``PeripheralHost`` one per connection it accepts: the one place
/// where a link's stack is put together.
final class HostLink: PeripheralLink {
    let hci: Connection
    let channels: ChannelManager
    let bearer: any ATTBearer
    let security: SecurityManager
    private let saving: BondSaving
    /// How the latest pairing on this link protected it.
    private let paired = Lock<(authenticated: Bool, secureConnections: Bool, keySize: Int)?>(nil)

    /// - Parameters:
    ///   - localAddress: our address as the peer sees it (an RPA or random address we
    ///     advertised from); the controller's public address when nil.
    ///   - pairings: told every pairing's end after its bond was saved, with how the save went.
    ///   - encryption: told every encryption event of the link.
    init(
        connection: Connection, channels: ChannelManager, policy: SecurityPolicy, attempts: RepeatedAttemptsRecord,
        localAddress: DeviceAddress? = nil,
        pairings: (@Sendable (Result<PairingKeys, PairingError>, Result<Bool, BondStoreError>?) -> Void)? = nil,
        encryption: SecurityManager.EncryptionObserver? = nil
    ) throws(PeripheralError) {
        hci = connection
        self.channels = channels
        bearer = L2CAPBearer(manager: channels, connection: connection.handle) { [connection] reason in
            try? await connection.disconnect(reason: reason)
        }
        let bonds = policy.bonds
        let saving = BondSaving(bonds, refusesWeakerRepairing: policy.pairing.refusesWeakerRepairing)
        self.saving = saving
        let paired = self.paired
        do {
            security = try SecurityManager(
                connection: connection, channels: channels, configuration: policy.effectivePairing(controllerAddress: connection.controller.info?.address),
                delegate: policy.delegate, localAddress: localAddress, storedBond: { peer in bonds?.bond(for: peer) },
                attempts: attempts,
                observer: { result in
                    if case let .success(keys) = result {
                        saving.save(keys)
                        paired.withLock { $0 = (keys.authenticated, keys.secureConnections, keys.keySize) }
                    }
                    pairings?(result, saving.last)
                },
                encryptionObserver: encryption)
        } catch {
            throw .security(error)
        }
    }

    var connection: Connection? { hci }
    var peer: DeviceAddress { hci.peer }
    var isConnected: Bool { hci.isConnected }
    var disconnectReason: HCIErrorCode? { hci.disconnectReason }
    var isEncrypted: Bool { hci.encryption.isEncrypted }
    /// The peer's identity: its bond's when its address (or the RPA its IRK resolves) has
    /// one, else the address it connected from.
    var identity: DeviceAddress { saving.bonds?.bond(for: hci.peer)?.peer ?? hci.peer }

    /// The link's protection as an ATT server checks permissions against it: the pairing
    /// that encrypted it, else the bond whose key did.
    var linkSecurity: ATTLinkSecurity {
        let encryption = hci.encryption
        let bond = saving.bonds?.bond(for: hci.peer)
        let hasKey = bond?.localKeys.longTermKey != nil || bond?.peerKeys.longTermKey != nil
        guard encryption.isEncrypted else { return ATTLinkSecurity(hasLongTermKey: hasKey) }
        // An Encryption Change v1 carries no key size, and nothing reads it when a bond's key
        // encrypted the link: that key's size, fixed when it was made, is the link's.
        let bondKey = hci.role == .central ? bond?.keyAsCentral : bond?.localKeys.longTermKey
        let protection = paired.withLock { $0 }
            ?? bond.map { ($0.authenticated, $0.secureConnections, Int(bondKey?.keySize ?? 7)) } ?? (false, false, 7)
        return ATTLinkSecurity(
            isEncrypted: true, isAuthenticated: protection.0, isSecureConnections: protection.1,
            keySize: UInt8(clamping: encryption.keySize ?? protection.2), hasLongTermKey: hasKey)
    }

    func disconnect() async throws(PeripheralError) {
        // Write Commands only queue in L2CAP: let them reach the controller first, for
        // 2 s at most (a peer whose controller takes nothing must not keep the link).
        if hci.isConnected { await channels.waitUntilSent(connection: hci.handle, timeout: .seconds(2)) }
        do { try await hci.disconnect() } catch { throw .connection(error) }
    }

    func disconnection() async throws(PeripheralError) -> HCIErrorCode {
        do { return try await hci.disconnection() } catch { throw .connection(error) }
    }

    /// Encrypts with the stored bond when the peer has one whose key the pairing policy
    /// admits (a failure is the typed re-encryption error, never a silent plaintext link).
    func encryptWithBond() async throws(PeripheralError) -> SecurityOutcome? {
        guard hci.role == .central, let bond = saving.bonds?.bond(for: hci.peer), security.admits(bond), let key = bond.keyAsCentral else { return nil }
        do { try await security.encrypt(with: bond) } catch { throw .security(error) }
        return .encryptedWithBond(authenticated: bond.authenticated, keySize: Int(key.keySize))
    }

    func secure(explicit: Bool) async throws(PeripheralError) -> SecurityOutcome {
        if !explicit, !isEncrypted, let encrypted = try await encryptWithBond() { return encrypted }
        let keys: PairingKeys
        do { keys = try await security.pair() } catch { throw .security(error) }
        // As peripheral, the central may answer our Security Request by encrypting with
        // the bond instead of pairing (the stored keys come back, with no method).
        if keys.method == nil { return .encryptedWithBond(authenticated: keys.authenticated, keySize: keys.keySize) }
        let saved: Bool
        switch saving.last ?? .success(false) {
        case let .success(stored): saved = stored
        case let .failure(error): throw .bondNotSaved(error)
        }
        return .paired(PairingKeysSummary(keys), bondSaved: saved)
    }

    func close() { security.close() }
}

extension PairingKeysSummary {
    init(_ keys: PairingKeys) {
        self.init(
            method: keys.method.map { "\($0)" } ?? "stored keys", secureConnections: keys.secureConnections,
            authenticated: keys.authenticated, keySize: keys.keySize, bonded: keys.bonded,
            identity: keys.peerIdentity?.address)
    }
}

/// Saves each bonding pairing's keys as it ends (ours or one the peer started), and keeps
/// how the last save went for the caller of ``HostLink/secure(explicit:)``. SMP reports the
/// end before it wakes that caller, so the caller always reads its own pairing's save.
final class BondSaving: Sendable {
    let bonds: BondStore?
    /// ``PairingConfiguration/refusesWeakerRepairing``, applied again here to the identity
    /// the peer distributed (SMP could only check the address it connected from).
    let refusesWeakerRepairing: Bool
    private let result = Lock<Result<Bool, BondStoreError>?>(nil)

    init(_ bonds: BondStore?, refusesWeakerRepairing: Bool = true) {
        self.bonds = bonds
        self.refusesWeakerRepairing = refusesWeakerRepairing
    }

    /// True saved; false when the pairing did not bond or there is no store.
    var last: Result<Bool, BondStoreError>? { result.withLock { $0 } }

    func save(_ keys: PairingKeys) {
        let outcome: Result<Bool, BondStoreError>
        if keys.bonded, !keys.peerIsIdentified {
            HostLog.logger.warning("bond not saved: the peer paired from a private address and distributed no identity, so it could not be found again", metadata: ["peer": "\(keys.peer)"])
            outcome = .success(false)
        } else if keys.bonded, let bonds {
            let bond = keys.bond(createdAt: Int64(time(nil)))
            // A peer on an address we did not know that names a stronger bond's identity:
            // the pairing happened, but it does not replace that bond (the store logs it).
            let refusesWeakerRepairing = refusesWeakerRepairing
            do {
                try bonds.save(bond) { stored in
                    guard refusesWeakerRepairing, let strength = stored.keyStrength, let shortfall = Self.shortfall(of: bond, against: strength) else { return nil }
                    return .strongerBondKept(peer: bond.peer, shortfall: shortfall)
                }
                outcome = .success(true)
            } catch {
                outcome = .failure(error)
            }
        } else {
            outcome = .success(false)
        }
        result.withLock { $0 = outcome }
    }

    /// What `bond` gives up against a stored bond of `strength`; keys without an LTK give
    /// up the LTK itself.
    static func shortfall(of bond: Bond, against strength: KeyStrength) -> String? {
        guard let new = bond.keyStrength else { return "no long-term key instead of one" }
        return strength.shortfall(of: new)
    }
}
