/// Why a P-256 key was refused.
///
/// A pairing that meets any of the peer-key cases must fail: SMP reports it as Pairing
/// Failed with reason DHKey Check Failed (Core Vol 3 Part H 2.3.5.6.1), and the resulting
/// keys, if any, must not be used.
public enum P256KeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which coordinate of a public key was out of range.
    public enum Coordinate: Sendable, Hashable {
        case x, y
    }

    /// A coordinate is not below the field prime p, so it names no field element.
    case coordinateNotBelowPrime(Coordinate)
    /// X = Y = 0: the 64-octet encoding SMP has no other way to express the point at
    /// infinity with, and a key an invalid-curve attack would send.
    case pointAtInfinity
    /// (X, Y) does not satisfy y² = x³ - 3x + b: ECDH with it could leak the private key.
    case notOnCurve
    /// The peer sent our own public key back (CVE-2020-26558 and relatives): a
    /// man-in-the-middle reflecting keys would otherwise pass Passkey Entry.
    case sameAsOwnPublicKey
    /// The peer used the specification's well-known debug key and debug mode is off: the
    /// traffic of such a pairing is readable by anyone.
    case debugKeyNotAllowed
    /// A fixed private key is zero or not below the curve order.
    case invalidPrivateKey
    /// The key agreement failed after the peer key passed validation.
    case keyAgreementFailed

    public var description: String {
        switch self {
        case .coordinateNotBelowPrime(let coordinate):
            return "public key \(coordinate) coordinate is not below the P-256 prime"
        case .pointAtInfinity: return "public key is the point at infinity (X = Y = 0)"
        case .notOnCurve: return "public key is not a point on P-256"
        case .sameAsOwnPublicKey: return "peer's public key equals our own public key"
        case .debugKeyNotAllowed: return "peer uses the SMP debug key and debug mode is off"
        case .invalidPrivateKey: return "private key is zero or not below the P-256 order"
        case .keyAgreementFailed: return "P-256 key agreement failed"
        }
    }
}
