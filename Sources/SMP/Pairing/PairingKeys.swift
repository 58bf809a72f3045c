import BluetoothCore

extension LongTermKey {
    /// The key as HCI carries it (least significant octet first).
    public var hciBytes: [UInt8] { key.littleEndianBytes }
}

/// An IRK with the identity address it belongs to.
public struct IdentityKey: Hashable, Sendable {
    public var identityResolvingKey: SMPValue128
    /// Public, or random static.
    public var address: DeviceAddress

    public init(identityResolvingKey: SMPValue128, address: DeviceAddress) {
        self.identityResolvingKey = identityResolvingKey
        self.address = address
    }
}

/// What a successful pairing produced, as plain values for whoever stores bonds. Give it
/// back to ``SecurityManager`` (through its key lookups) to re-encrypt a later connection.
public struct PairingKeys: Hashable, Sendable {
    /// The peer's address on the link that paired.
    public var peer: DeviceAddress
    /// Whether both devices asked to bond: only then should the keys be stored.
    public var bonded: Bool
    public var secureConnections: Bool
    /// Whether the method protected against a man in the middle.
    public var authenticated: Bool
    /// The negotiated encryption key size in octets (7 ... 16).
    public var keySize: Int
    /// How the peer was authenticated; nil for keys taken from a stored bond.
    public var method: PairingMethod?
    /// Secure Connections: the LTK both sides derived, used in either role.
    public var longTermKey: LongTermKey?
    /// Legacy: the LTK the peer distributed; we use it when we are central.
    public var peerLongTermKey: LongTermKey?
    /// Legacy: the LTK we distributed; the peer uses it when it is central.
    public var localLongTermKey: LongTermKey?
    /// The peer's IRK and identity address.
    public var peerIdentity: IdentityKey?
    /// The peer's CSRK.
    public var peerSigningKey: SMPValue128?
    /// The CSRK we distributed.
    public var localSigningKey: SMPValue128?

    public init(peer: DeviceAddress, bonded: Bool, secureConnections: Bool, authenticated: Bool, keySize: Int, method: PairingMethod?) {
        self.peer = peer
        self.bonded = bonded
        self.secureConnections = secureConnections
        self.authenticated = authenticated
        self.keySize = keySize
        self.method = method
    }

    /// Our IRK and identity, when we distributed them.
    public var localIdentity: IdentityKey?

    /// The key to encrypt with when we are central (LE Enable Encryption).
    public var keyAsCentral: LongTermKey? { secureConnections ? longTermKey : peerLongTermKey }

    /// The key to answer an LTK request with when we are peripheral, if EDIV and Rand
    /// name it.
    public func keyAsPeripheral(encryptedDiversifier: UInt16, randomNumber: UInt64) -> LongTermKey? {
        bond(createdAt: 0).keyAsPeripheral(encryptedDiversifier: encryptedDiversifier, randomNumber: randomNumber)
    }

    /// The keys of a stored bond, as a pairing would have reported them (a central that
    /// answered our Security Request by encrypting with the bond).
    public init(bond: Bond, peer: DeviceAddress) {
        let ltk = bond.peerKeys.longTermKey ?? bond.localKeys.longTermKey
        self.init(peer: peer, bonded: true, secureConnections: bond.secureConnections, authenticated: bond.authenticated,
                  keySize: Int(ltk?.keySize ?? 16), method: nil)
        if bond.secureConnections {
            longTermKey = ltk
        } else {
            peerLongTermKey = bond.peerKeys.longTermKey
            localLongTermKey = bond.localKeys.longTermKey
        }
        peerIdentity = bond.peerKeys.identityResolvingKey.map { IdentityKey(identityResolvingKey: $0, address: bond.peer) }
        peerSigningKey = bond.peerKeys.signatureKey?.key
        localSigningKey = bond.localKeys.signatureKey?.key
    }

    /// Whether a bond of these keys could be found again: the peer is known by an identity
    /// address (the public or static address it paired from, or the identity it
    /// distributed). A peer on a private address that distributed no identity comes back
    /// from another address, and its bond would only take room in the store.
    public var peerIsIdentified: Bool { (peerIdentity?.address ?? peer).isIdentity }

    /// The ``Bond`` to store (meaningful when ``bonded``): the peer under its identity
    /// address when it distributed one; the SC LTK on both sides, as `Bond` records it.
    public func bond(createdAt: Int64) -> Bond {
        let peerLTK = secureConnections ? longTermKey : peerLongTermKey
        let localLTK = secureConnections ? longTermKey : localLongTermKey
        return Bond(
            peer: peerIdentity?.address ?? peer,
            peerKeys: DistributedKeys(longTermKey: peerLTK, identityResolvingKey: peerIdentity?.identityResolvingKey,
                                      signatureKey: peerSigningKey.map { SignatureKey(key: $0) }),
            localKeys: DistributedKeys(longTermKey: localLTK, identityResolvingKey: localIdentity?.identityResolvingKey,
                                       signatureKey: localSigningKey.map { SignatureKey(key: $0) }),
            authenticated: authenticated, secureConnections: secureConnections, createdAt: createdAt)
    }
}

extension Bond {
    /// The key to encrypt with as central: the LTK the peer distributed (SC: the one LTK).
    public var keyAsCentral: LongTermKey? { peerKeys.longTermKey }

    /// The key for an LTK request as peripheral: ours, if EDIV and Rand name it.
    public func keyAsPeripheral(encryptedDiversifier: UInt16, randomNumber: UInt64) -> LongTermKey? {
        guard let key = localKeys.longTermKey, key.ediv == encryptedDiversifier, key.rand == randomNumber else { return nil }
        return key
    }
}
