import BluetoothCore

/// The user's side of pairing. Each call is made on a task of its own; pairing waits for
/// the answer (within the 30 s SMP timer, which keeps running while the user thinks: it
/// restarts only when we send, and the pairing deadline bounds the whole).
public protocol PairingDelegate: Sendable {
    /// Show `passkey` (six digits, leading zeros kept) for the user to type on the peer.
    func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async
    /// The passkey the peer shows, or nil when the user cancels (Passkey Entry Failed).
    func enterPasskey(peer: DeviceAddress) async -> UInt32?
    /// Whether the peer shows the same six-digit `value` (Numeric Comparison Failed if not).
    func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool
    /// OOB data received from the peer for the next pairing, if any.
    func outOfBandData(peer: DeviceAddress) async -> OOBData?
}

extension PairingDelegate {
    public func outOfBandData(peer: DeviceAddress) async -> OOBData? { nil }
}

/// Formats a passkey as the user sees it: six digits, leading zeros kept.
public func passkeyText(_ passkey: UInt32) -> String {
    let digits = String(passkey)
    return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
}
