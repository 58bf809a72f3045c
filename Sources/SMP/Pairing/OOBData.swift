/// Data exchanged out of band before pairing (Core Vol 3 Part H 2.3.5.6.4 and 2.3.5.4).
public enum OOBData: Hashable, Sendable {
    /// Legacy OOB: the 128-bit TK both devices received.
    case legacy(temporaryKey: SMPValue128)
    /// Secure Connections: the peer's random r and confirm value C = f4(PKx, PKx, r, 0),
    /// checked against the public key the peer then sends.
    case secureConnections(random: SMPValue128, confirm: SMPValue128)
}

/// Our own Secure Connections OOB data, to hand to the peer out of band before pairing:
/// the random r and the confirm value C = f4(PKx, PKx, r, 0) of our key pair.
public struct LocalOOBData: Hashable, Sendable {
    public var random: SMPValue128
    public var confirm: SMPValue128
}
