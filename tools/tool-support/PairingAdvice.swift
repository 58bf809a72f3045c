import SMP

/// A pairing failure as the user of the tool should read it: what happened, then the
/// command line that gets past it.
public func pairingAdvice(_ error: PairingError) -> String {
    switch error {
    case .peerFailed(.confirmValueFailed), .refused(.confirmValueFailed, _):
        return "pairing failed: Confirm Value Failed: the passkey typed was not the one shown: "
            + "try again (`bareble-central pair ADDRESS`) and type exactly the six digits shown"
    case .refused(.passkeyEntryFailed, _):
        return "pairing cancelled: Passkey Entry Failed: no passkey was typed in time (or stdin is closed): "
            + "run `bareble-central pair ADDRESS` on a terminal and type the passkey the device shows"
    case .peerFailed(.passkeyEntryFailed):
        return "the device cancelled the passkey entry (Passkey Entry Failed): try again and type the passkey on the device"
    case .refused(.numericComparisonFailed, _):
        return "pairing refused: Numeric Comparison Failed: the numbers were not confirmed: "
            + "if the device shows the same six digits, run `bareble-central pair ADDRESS` again and answer y"
    case .peerFailed(.numericComparisonFailed):
        return "the device rejected the numeric comparison (Numeric Comparison Failed): try again and confirm on both sides"
    case .refused(.authenticationRequirements, let why) where why.contains("Secure Connections Only"):
        return "pairing refused: the device offers only legacy pairing and --sc-only refuses it (Authentication Requirements): "
            + "leave out --sc-only to accept legacy pairing with this device"
    case let .repeatedAttempts(wait):
        return "pairing with this device failed moments ago: wait \(wholeSeconds(wait)) s before trying again (repeated-attempts protection)"
    case .peerFailed(.repeatedAttempts):
        return "the device refuses pairing for now after failed attempts (Repeated Attempts): "
            + "wait a few seconds (the wait grows with each failure) and try again"
    case .reencryptionFailed:
        return "\(error): `bareble-central bonds remove ADDRESS`, then `bareble-central pair ADDRESS`"
    default:
        return "\(error)"
    }
}

/// A wait as whole seconds, rounded up, so "wait 2 s" is never too short.
private func wholeSeconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds + (attoseconds > 0 ? 1 : 0)
}
