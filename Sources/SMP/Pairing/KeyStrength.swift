/// How well a pairing protects its keys, to compare a new pairing with the bond it would
/// replace. Not in the specification: a weaker pairing over a stronger bond is how an
/// attacker using a bonded device's address downgrades it (Just Works over a bond made
/// with a passkey), so by default SMP refuses one (``PairingConfiguration/refusesWeakerRepairing``),
/// as Zephyr does.
public struct KeyStrength: Sendable, Hashable {
    /// The method protected against a man in the middle.
    public var authenticated: Bool
    public var secureConnections: Bool
    /// The encryption key size in octets.
    public var keySize: Int

    public init(authenticated: Bool, secureConnections: Bool, keySize: Int) {
        self.authenticated = authenticated
        self.secureConnections = secureConnections
        self.keySize = keySize
    }

    /// What `other` gives up against this, in words; nil when it is at least as strong on
    /// every count.
    public func shortfall(of other: KeyStrength) -> String? {
        var lost: [String] = []
        if authenticated && !other.authenticated { lost.append("unauthenticated (Just Works) instead of authenticated") }
        if secureConnections && !other.secureConnections { lost.append("legacy pairing instead of Secure Connections") }
        if other.keySize < keySize { lost.append("\(other.keySize)-octet keys instead of \(keySize)") }
        return lost.isEmpty ? nil : lost.joined(separator: ", ")
    }
}

extension Bond {
    /// The protection of the bond's keys; nil when it holds no LTK (nothing to downgrade).
    public var keyStrength: KeyStrength? {
        guard let key = localKeys.longTermKey ?? peerKeys.longTermKey else { return nil }
        return KeyStrength(authenticated: authenticated, secureConnections: secureConnections, keySize: Int(key.keySize))
    }
}
