import BareBLE

/// A GATT failure as a user should read it: what happened and what to do.
public func userMessage(_ error: PeripheralError, doing what: String? = nil) -> String {
    let prefix = what.map { "\($0): " } ?? ""
    if error.needsPairing, let code = error.errorCode {
        return prefix + "the peer answered \(code): this characteristic needs an encrypted link: pair first (`bareble-central pair`), or leave out --no-auto-pair"
    }
    if case let .security(pairing) = error {
        return prefix + pairingAdvice(pairing)
    }
    if let reason = error.disconnectReason {
        return prefix + "the link ended (\(reason)): connect again"
    }
    if error.errorCode == .readNotPermitted {
        return prefix + "the peer does not allow reading this (Read Not Permitted); `bareble-central explore` shows each characteristic's properties"
    }
    if error.errorCode == .writeNotPermitted {
        return prefix + "the peer does not allow writing this (Write Not Permitted); `bareble-central explore` shows each characteristic's properties"
    }
    return prefix + error.description
}
