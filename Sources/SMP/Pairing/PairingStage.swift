/// What a pairing was waiting for when a deadline ended it, so the error can say what
/// stalled and who to look at.
public enum PairingStage: Sendable, Hashable, CustomStringConvertible {
    /// The central to answer our Security Request (pair or encrypt), or to start pairing.
    case peerToStart
    /// The peer's Pairing Response.
    case pairingResponse
    /// Our user's passkey or numeric-comparison answer.
    case user
    /// The peer's next step of authentication (public key, confirm, random, DHKey check).
    case peerAuthentication
    /// The link to be encrypted with the key pairing produced.
    case encryption
    /// The peer's distributed keys.
    case keyDistribution

    public var description: String {
        switch self {
        case .peerToStart: "the central to pair or encrypt after our Security Request"
        case .pairingResponse: "the peer's Pairing Response"
        case .user: "our user's passkey or confirmation"
        case .peerAuthentication: "the peer's next authentication PDU (public key, confirm, random or DHKey check)"
        case .encryption: "the link to be encrypted"
        case .keyDistribution: "the peer's keys"
        }
    }
}
