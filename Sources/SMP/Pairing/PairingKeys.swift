import BluetoothCore

/// A long-term key with what identifies it in an LE Enable Encryption or an LTK request.
/// Secure Connections keys have EDIV = 0 and Rand = 0.
public struct LongTermKey: Hashable, Sendable {
    public var value: SMPValue128
    public var encryptedDiversifier: UInt16
    public var randomNumber: UInt64

    public init(value: SMPValue128, encryptedDiversifier: UInt16 = 0, randomNumber: UInt64 = 0) {
        self.value = value
        self.encryptedDiversifier = encryptedDiversifier
        self.randomNumber = randomNumber
    }

    /// The key as HCI carries it (least significant octet first).
    public var hciBytes: [UInt8] { value.littleEndianBytes }
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
    public var method: PairingMethod
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

    public init(peer: DeviceAddress, bonded: Bool, secureConnections: Bool, authenticated: Bool, keySize: Int, method: PairingMethod) {
        self.peer = peer
        self.bonded = bonded
        self.secureConnections = secureConnections
        self.authenticated = authenticated
        self.keySize = keySize
        self.method = method
    }

    /// The key to encrypt with when we are central (LE Enable Encryption).
    public var keyAsCentral: LongTermKey? { secureConnections ? longTermKey : peerLongTermKey }

    /// The key to answer an LTK request with when we are peripheral, if EDIV and Rand
    /// name it.
    public func keyAsPeripheral(encryptedDiversifier: UInt16, randomNumber: UInt64) -> LongTermKey? {
        let key = secureConnections ? longTermKey : localLongTermKey
        guard let key, key.encryptedDiversifier == encryptedDiversifier, key.randomNumber == randomNumber else { return nil }
        return key
    }
}
