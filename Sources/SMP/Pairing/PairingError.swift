import HCI

/// Why a pairing or an encryption did not succeed. Every case names what to do next.
public enum PairingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// We refused the pairing and told the peer this reason (Pairing Failed); the text
    /// says why.
    case refused(PairingFailedReason, String)
    /// The peer ended the pairing with Pairing Failed and this reason.
    case peerFailed(PairingFailedReason)
    /// No SMP PDU came for 30 s (Core Vol 3 Part H 3.4). No new pairing runs on this link.
    case timedOut
    /// The pairing (or the wait for the peer to start one) did not end within its overall
    /// bound (``SecurityManager/pairingDeadline``, or the SMP timeout for the central to
    /// answer a Security Request), although the peer kept it alive; `stage` says what was
    /// still awaited. The peer was told (Unspecified Reason) when a pairing was running.
    case deadlineExceeded(PairingStage, after: Duration)
    /// The caller cancelled the wait; a pairing it had started was ended (Unspecified
    /// Reason sent to the peer).
    case cancelled
    /// The SMP timer expired earlier on this link; pairing needs a new connection.
    case linkTimedOutEarlier
    /// The controller refused to encrypt the link (Encryption Change status or command
    /// failure).
    case encryptionFailed(HCIErrorCode)
    /// Re-encrypting a bonded peer with the stored key failed: the peer has lost the
    /// bond (or is not who it claims). The link is not silently left unencrypted.
    case reencryptionFailed(HCIErrorCode)
    /// The link came up encrypted with a key shorter than the minimum.
    case keySizeTooSmall(Int, minimum: Int)
    /// The connection ended during pairing.
    case disconnected(HCIErrorCode)
    /// A pairing or encryption is already running on this link.
    case busy
    /// This peer failed pairing recently; wait before trying again (repeated attempts).
    case repeatedAttempts(retryAfter: Duration)
    /// The configuration cannot be used; the text says what to change.
    case invalidConfiguration(String)
    /// Sending on the SMP channel or an HCI command failed.
    case transport(String)

    public var description: String {
        switch self {
        case let .refused(reason, why): "pairing refused (\(reason)): \(why)"
        case let .peerFailed(reason): "the peer ended pairing: \(reason)\(Self.advice(reason))"
        case .timedOut: "pairing timed out: the peer stopped answering for 30 s; disconnect and connect again to retry"
        case let .deadlineExceeded(stage, after):
            "pairing did not finish within \(after), still waiting for \(stage)\(Self.advice(stage))"
        case .cancelled: "pairing was cancelled by the caller; pair again when needed"
        case .linkTimedOutEarlier: "pairing timed out earlier on this link; disconnect and connect again to pair"
        case let .encryptionFailed(status): "the link could not be encrypted (\(status)); pair again"
        case let .reencryptionFailed(status): "re-encryption with the stored key failed (\(status)): the peer lost the bond or is an impostor; remove the bond and pair again"
        case let .keySizeTooSmall(size, minimum): "the link is encrypted with a \(size)-octet key, below the minimum of \(minimum); the peer must offer longer keys"
        case let .disconnected(reason): "the connection ended during pairing (\(reason)); connect again"
        case .busy: "a pairing is already running on this connection; wait for it to finish"
        case let .repeatedAttempts(after): "pairing with this peer failed recently; try again in \(after)"
        case let .invalidConfiguration(text): "invalid pairing configuration: \(text)"
        case let .transport(text): "pairing could not send: \(text)"
        }
    }

    private static func advice(_ stage: PairingStage) -> String {
        switch stage {
        case .peerToStart: "; the central ignored the request: pair from the central, or connect again and retry"
        case .user: "; answer the passkey or comparison sooner, or raise pairingDeadline"
        case .encryption: "; the controller or the peer never completed encryption: disconnect and connect again"
        default: "; the peer is stalling or very slow: disconnect and connect again, or raise pairingDeadline for a slow peer"
        }
    }

    private static func advice(_ reason: PairingFailedReason) -> String {
        switch reason {
        case .confirmValueFailed, .passkeyEntryFailed: " (wrong passkey?); try again"
        case .authenticationRequirements: " (it needs stronger security, e.g. MITM or Secure Connections)"
        case .pairingNotSupported: " (the peer does not accept pairing now)"
        case .repeatedAttempts: " (wait before trying again)"
        default: ""
        }
    }
}
