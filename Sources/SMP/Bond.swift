import BluetoothCore

/// What pairing with bonding leaves behind for one peer (Core Vol 3 Part H 2.4.1, 3.6): who
/// the peer is, the keys it distributed to us, the keys we distributed to it, and how the
/// pairing was protected. A plain value: the pairing layer makes it, the bond store keeps
/// it, reconnection and address resolution read it.
public struct Bond: Sendable, Hashable {
    /// The peer's identity address: public, or random static (type `.random`). Never an
    /// RPA: a peer that distributed no identity is stored under the address it paired from.
    public var peer: DeviceAddress
    /// The keys the peer distributed to us. Its LTK is the one we present (LE Enable
    /// Encryption) when we are central and it is peripheral.
    public var peerKeys: DistributedKeys
    /// The keys we distributed to the peer. Our LTK is the one we answer the LTK Request
    /// with when we are peripheral.
    public var localKeys: DistributedKeys
    /// The pairing method protected against a man in the middle (Passkey Entry, Numeric
    /// Comparison, OOB): the keys are "authenticated".
    public var authenticated: Bool
    /// LE Secure Connections made the keys. Its single LTK (EDIV = 0, Rand = 0) serves both
    /// roles, so it is recorded in both ``peerKeys`` and ``localKeys``.
    public var secureConnections: Bool
    /// When the bond was made, in whole seconds since 1970-01-01 UTC.
    public var createdAt: Int64

    public init(
        peer: DeviceAddress,
        peerKeys: DistributedKeys = .none,
        localKeys: DistributedKeys = .none,
        authenticated: Bool,
        secureConnections: Bool,
        createdAt: Int64
    ) {
        self.peer = peer
        self.peerKeys = peerKeys
        self.localKeys = localKeys
        self.authenticated = authenticated
        self.secureConnections = secureConnections
        self.createdAt = createdAt
    }
}

/// The keys one side distributed in the key distribution phase (Core Vol 3 Part H 3.6.1).
public struct DistributedKeys: Sendable, Hashable {
    public var longTermKey: LongTermKey?
    /// The Identity Resolving Key, with which this side's RPAs resolve.
    public var identityResolvingKey: SMPValue128?
    public var signatureKey: SignatureKey?

    public init(longTermKey: LongTermKey? = nil, identityResolvingKey: SMPValue128? = nil, signatureKey: SignatureKey? = nil) {
        self.longTermKey = longTermKey
        self.identityResolvingKey = identityResolvingKey
        self.signatureKey = signatureKey
    }

    public static let none = DistributedKeys()
}

/// An LTK with what identifies it on an LE Long Term Key Request (Core Vol 3 Part H 2.4.2).
public struct LongTermKey: Sendable, Hashable {
    public var key: SMPValue128
    /// Encrypted Diversifier; 0 for Secure Connections.
    public var ediv: UInt16
    /// The 64-bit Rand; 0 for Secure Connections.
    public var rand: UInt64
    /// The negotiated encryption key size in octets (7 ... 16).
    public var keySize: UInt8

    public init(key: SMPValue128, ediv: UInt16, rand: UInt64, keySize: UInt8) {
        self.key = key
        self.ediv = ediv
        self.rand = rand
        self.keySize = keySize
    }
}

/// A Connection Signature Resolving Key with the sign counter of data signed with it
/// (Core Vol 3 Part H 2.4.2.2, Vol 3 Part C 10.4).
public struct SignatureKey: Sendable, Hashable {
    public var key: SMPValue128
    /// The next SignCounter to use (ours), or the lowest one still accepted from the peer:
    /// one past the last signed write verified (the peer's).
    public var signCounter: UInt32

    public init(key: SMPValue128, signCounter: UInt32 = 0) {
        self.key = key
        self.signCounter = signCounter
    }
}
