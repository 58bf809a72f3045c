import Crypto

/// Our P-256 key pair for LE Secure Connections, and the Diffie-Hellman function that turns
/// a peer's public key into the DHKey (Core Vol 3 Part H 2.3.5.6.1).
public struct P256KeyPair: Sendable {
    private let privateKey: P256.KeyAgreement.PrivateKey
    public let publicKey: P256PublicKey

    /// The field prime p of P-256: 2^256 - 2^224 + 2^192 + 2^96 - 1.
    static let prime = SMPValue256(
        high: 0xFFFF_FFFF_0000_0001_0000_0000_0000_0000,
        low: 0x0000_0000_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF
    )

    /// The debug private key (Core Vol 3 Part H 2.3.5.6.1), the partner of
    /// ``P256PublicKey/debug``. Public knowledge: only for debug mode and tests.
    public static let debugPrivateKey = SMPValue256(
        high: 0x3f49_f6d4_a3c5_5f38_74c9_b3e3_d210_3f50,
        low: 0x4aff_607b_eb40_b799_5899_b8a6_cd3c_1abd
    )

    /// A fresh key pair from the system's secure generator. The specification allows
    /// keeping one for several pairings but requires a new one at least whenever a pairing
    /// fails; making one per pairing is simplest and cheap.
    public init() {
        self.init(wrapping: P256.KeyAgreement.PrivateKey())
    }

    /// A key pair from a fixed private key (most significant octet first): for tests and for
    /// debug mode with ``debugPrivateKey``.
    public init(privateKey: SMPValue256) throws(P256KeyError) {
        do {
            self.init(wrapping: try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey.bigEndianBytes))
        } catch {
            throw .invalidPrivateKey
        }
    }

    private init(wrapping key: P256.KeyAgreement.PrivateKey) {
        privateKey = key
        // swift-crypto's raw representation is X || Y, most significant first, 64 octets for
        // every valid key; a different length would be a broken dependency.
        let raw = Array(key.publicKey.rawRepresentation)
        guard let publicKey = try? P256PublicKey(bigEndian: raw) else {
            preconditionFailure("P-256 public key raw representation is \(raw.count) octets, not 64")
        }
        self.publicKey = publicKey
    }

    /// Whether we are using the debug key pair (debug mode).
    public var isDebugKey: Bool { publicKey.isDebugKey }

    /// Checks a peer's public key before any use (Core Vol 3 Part H 2.3.5.6.1), in this
    /// order: each coordinate below p, not X = Y = 0, on the curve, not our own public key,
    /// and not the debug key unless `allowingDebugKey`.
    public func validate(peerPublicKey peer: P256PublicKey, allowingDebugKey: Bool) throws(P256KeyError) {
        _ = try validatedCryptoKey(peer, allowingDebugKey: allowingDebugKey)
    }

    /// The DHKey: the X coordinate of our private key times the peer's public key, most
    /// significant octet first as f5's W takes it. The peer key is validated first
    /// (``validate(peerPublicKey:allowingDebugKey:)``); there is no way to skip that.
    ///
    /// - Parameter allowingDebugKey: true only in debug mode; otherwise a peer sending the
    ///   debug public key is refused.
    public func dhKey(peerPublicKey peer: P256PublicKey, allowingDebugKey: Bool = false) throws(P256KeyError) -> SMPValue256 {
        let peerKey = try validatedCryptoKey(peer, allowingDebugKey: allowingDebugKey)
        let secret: SharedSecret
        do {
            secret = try privateKey.sharedSecretFromKeyAgreement(with: peerKey)
        } catch {
            throw .keyAgreementFailed
        }
        let bytes = secret.withUnsafeBytes { Array($0) }
        guard let dhKey = try? SMPValue256(bigEndian: bytes) else { throw .keyAgreementFailed }
        return dhKey
    }

    private func validatedCryptoKey(_ peer: P256PublicKey, allowingDebugKey: Bool) throws(P256KeyError) -> P256.KeyAgreement.PublicKey {
        guard peer.x < Self.prime else { throw .coordinateNotBelowPrime(.x) }
        guard peer.y < Self.prime else { throw .coordinateNotBelowPrime(.y) }
        guard peer.x != .zero || peer.y != .zero else { throw .pointAtInfinity }
        // BoringSSL checks the curve equation when it imports affine coordinates; with the
        // range and infinity cases ruled out above, a refusal can only mean "not on P-256".
        let cryptoKey: P256.KeyAgreement.PublicKey
        do {
            cryptoKey = try P256.KeyAgreement.PublicKey(rawRepresentation: peer.bigEndianBytes)
        } catch {
            throw .notOnCurve
        }
        guard peer != publicKey else { throw .sameAsOwnPublicKey }
        guard allowingDebugKey || !peer.isDebugKey else { throw .debugKeyNotAllowed }
        return cryptoKey
    }
}
