import HCI

/// What drives a ``PairingMachine``: a PDU from the peer, a user's answer, an encryption
/// event from the controller, the SMP timer.
public enum PairingInput: Sendable, Hashable {
    /// Start pairing: the central sends Pairing Request, the peripheral Security Request.
    case pair
    /// The payload of one B-frame on the SMP channel.
    case received([UInt8])
    /// The passkey the user typed, or nil when the user cancelled.
    case passkeyEntered(UInt32?)
    /// The user's answer to "do both devices show this number?".
    case numericComparisonConfirmed(Bool)
    /// Peripheral: the controller asks for the key the central encrypts with.
    case longTermKeyRequested(encryptedDiversifier: UInt16, randomNumber: UInt64)
    /// The link is now encrypted; the key size when the controller reported it.
    case encryptionChanged(keySize: Int?)
    /// Encrypting failed with this status (Encryption Change, or LE Enable Encryption refused).
    case encryptionFailed(HCIErrorCode)
    /// Read Encryption Key Size answered after an Encryption Change v1 (which carries no
    /// size), or nil when the controller cannot tell. Pairing completes only after this
    /// (or a v2 change with its size); a key shorter than negotiated ends the pairing.
    case encryptionKeySizeRead(Int?)
    /// Read Encryption Key Size failed with this status: the key cannot be checked against
    /// what was negotiated, so the pairing ends (as BlueZ takes such a key as 0 octets).
    case encryptionKeySizeUnreadable(HCIErrorCode)
    /// The SMP timer (30 s since the last PDU we queued in a running pairing) expired.
    case timerExpired
    /// The pairing's overall deadline (started with the pairing, `after` ago) passed.
    case deadlineExpired(after: Duration)
    /// The caller gave up: a running pairing ends (Unspecified Reason to the peer).
    case cancel
}

/// What a ``PairingMachine`` asks its driver to do, in order.
public enum PairingAction: Sendable, Hashable {
    case send(SMPPDU)
    /// Show this six-digit passkey to the user.
    case displayPasskey(UInt32)
    /// Ask the user to type the passkey the peer shows (answer with ``PairingInput/passkeyEntered(_:)``).
    case requestPasskey
    /// Ask the user whether the peer shows this number too.
    case confirmNumericComparison(UInt32)
    /// Central: LE Enable Encryption with this key (the STK or the LTK).
    case startEncryption(LongTermKey)
    /// Peripheral: answer the LTK request with this key, or with a negative reply for nil.
    case replyLongTermKey(LongTermKey?)
    /// Central: the peripheral sent Security Request. The driver decides: encrypt with a
    /// stored key that meets these requirements, or pair (``PairingInput/pair``).
    case securityRequested(AuthenticationRequirements)
    /// A pairing started: start its overall deadline (answer ``PairingInput/deadlineExpired(after:)``).
    case startDeadline
    /// (Re)start the SMP timer (30 s; answer ``PairingInput/timerExpired``).
    case restartTimer
    /// The pairing ended: stop the SMP timer and the deadline.
    case stopTimer
    /// Pairing succeeded (the link is encrypted and every key was exchanged).
    case completed(PairingKeys)
    /// Pairing failed; nothing it produced may be used.
    case failed(PairingError)
}

extension PairingAction {
    var isSend: Bool {
        if case .send = self { return true }
        return false
    }
}
