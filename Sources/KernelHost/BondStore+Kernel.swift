import BluetoothCore
import Bonding
import SMP

/// The bond store as the kernel's management interface sees it, for `hci-raw:N`, where the
/// kernel pairs: the keys it reports are kept here (``keep(_:now:)``) and handed back to it
/// when a host attaches (``kernelKeys()``), so bonds outlive the kernel's memory without
/// a daemon. The same file serves the user channel's own SMP: one controller identity, one
/// set of bonds, whichever host made them.
extension BondStore {
    /// The attachment that keeps a bonded peer's connection parameters (8 octets: minimum
    /// and maximum interval, latency, supervision timeout, little endian).
    public static let kernelConnectionParametersAttachment = "kernel-connection-parameters"

    /// What keeping one key did.
    public enum KernelKeyOutcome: Sendable, Equatable {
        case kept
        /// A debug key: anyone can derive it and the kernel refuses to load it.
        case debugKeyRefused
        /// Connection parameters of a peer with no bond: nothing to attach them to.
        case noBond
        /// A key value that is not 16 octets (a record built by hand: the decoder reads 16).
        case invalidKey
    }

    /// Merges one key into the bond of its peer (made when the first key of a pairing
    /// comes; the kernel reports the IRK, then the CSRK, then the LTKs). Whether the key
    /// is meant to be kept (Store_Hint) is the caller's decision.
    ///
    /// Mapping (bonds.md conventions): a legacy LTK marked `central` is the peer's
    /// (``Bond/peerKeys``), one without is ours (``Bond/localKeys``); a Secure Connections
    /// LTK goes in both. An LTK of another kind than the bond's (legacy after Secure
    /// Connections or back) is a new pairing: the old LTKs go.
    @discardableResult
    public func keep(_ event: KernelKeyEvent, now: Int64) throws(BondStoreError) -> KernelKeyOutcome {
        switch event {
        case let .longTermKey(key):
            guard key.type != .debugP256 else { return .debugKeyRefused }
            guard let value = Self.value(key.value) else { return .invalidKey }
            let longTermKey = LongTermKey(key: value, ediv: key.ediv, rand: key.rand, keySize: key.keySize)
            try change(key.peer, now: now) { bond in
                if bond.secureConnections != key.type.isSecureConnections {
                    bond.peerKeys.longTermKey = nil
                    bond.localKeys.longTermKey = nil
                }
                bond.secureConnections = key.type.isSecureConnections
                bond.authenticated = key.type.isAuthenticated
                if key.type.isSecureConnections || key.central { bond.peerKeys.longTermKey = longTermKey }
                if key.type.isSecureConnections || !key.central { bond.localKeys.longTermKey = longTermKey }
            }
        case let .identityResolvingKey(key, _):
            guard let value = Self.value(key.value) else { return .invalidKey }
            try change(key.peer, now: now) { $0.peerKeys.identityResolvingKey = value }
        case let .signatureKey(key):
            guard let value = Self.value(key.value) else { return .invalidKey }
            let signatureKey = SignatureKey(key: value)
            try change(key.peer, now: now) { bond in
                if key.isRemote { bond.peerKeys.signatureKey = signatureKey } else { bond.localKeys.signatureKey = signatureKey }
            }
        case let .connectionParameters(parameters):
            guard let bond = bond(for: parameters.peer) else { return .noBond }
            var writer = ByteWriter()
            parameters.writeValues(to: &writer)
            try setAttachment(writer.bytes, name: Self.kernelConnectionParametersAttachment, for: bond.peer)
        }
        return .kept
    }

    /// The stored keys in the kernel's records, for Load Long Term Keys, Load Identity
    /// Resolving Keys and Load Connection Parameters. A Secure Connections bond gives one
    /// LTK for both roles; a legacy bond its peer's (`central`) and its own.
    public func kernelKeys() -> (longTermKeys: [KernelKeys.LongTermKey], identityResolvingKeys: [KernelKeys.IdentityResolvingKey], connectionParameters: [KernelKeys.ConnectionParameters]) {
        var longTermKeys: [KernelKeys.LongTermKey] = []
        var identityResolvingKeys: [KernelKeys.IdentityResolvingKey] = []
        var connectionParameters: [KernelKeys.ConnectionParameters] = []
        for bond in bonds {
            func record(_ key: LongTermKey, central: Bool) -> KernelKeys.LongTermKey {
                let type: KernelKeys.KeyType = switch (bond.secureConnections, bond.authenticated) {
                case (true, true): .authenticatedP256
                case (true, false): .unauthenticatedP256
                case (false, true): .authenticatedLegacy
                case (false, false): .unauthenticatedLegacy
                }
                return KernelKeys.LongTermKey(
                    peer: bond.peer, type: type, central: central, keySize: key.keySize, ediv: key.ediv, rand: key.rand,
                    value: key.key.littleEndianBytes)
            }
            if bond.secureConnections {
                if let key = bond.peerKeys.longTermKey ?? bond.localKeys.longTermKey { longTermKeys.append(record(key, central: false)) }
            } else {
                if let key = bond.peerKeys.longTermKey { longTermKeys.append(record(key, central: true)) }
                if let key = bond.localKeys.longTermKey { longTermKeys.append(record(key, central: false)) }
            }
            if let irk = bond.peerKeys.identityResolvingKey {
                identityResolvingKeys.append(KernelKeys.IdentityResolvingKey(peer: bond.peer, value: irk.littleEndianBytes))
            }
            // An attachment that cannot be read or has the wrong size loads nothing: the
            // kernel then uses its defaults for that peer.
            if let bytes = try? attachment(Self.kernelConnectionParametersAttachment, for: bond.peer),
               let parameters = KernelKeys.ConnectionParameters(peer: bond.peer, values: bytes) {
                connectionParameters.append(parameters)
            }
        }
        return (longTermKeys, identityResolvingKeys, connectionParameters)
    }

    /// One read-modify-write of `peer`'s bond, made first when there is none.
    private func change(_ peer: DeviceAddress, now: Int64, _ body: (inout Bond) -> Void) throws(BondStoreError) {
        try update { bonds in
            var bond = bonds.first { $0.peer == peer } ?? Bond(peer: peer, authenticated: false, secureConnections: false, createdAt: now)
            body(&bond)
            // Last wins: `StoredBonds` keeps one bond per peer.
            bonds.append(bond)
        }
    }

    /// A key as the kernel sends it: 16 octets, little endian.
    private static func value(_ littleEndian: [UInt8]) -> SMPValue128? {
        littleEndian.count == 16 ? try? SMPValue128(littleEndian: littleEndian) : nil
    }
}
