import BluetoothCore

/// The repeated-attempts rule (Core Vol 3 Part H 2.3.6): after a failed authentication the
/// wait before a peer may pair again doubles with each further failure, from `initial` up
/// to `maximum`; a success forgets the peer. A pure value with the time passed in, so the
/// policy is testable without clocks; ``SecurityManager`` shares one per host.
public struct RepeatedAttempts: Sendable {
    public var initial: Duration
    public var maximum: Duration
    private var peers: [BluetoothAddress: (failures: Int, until: ContinuousClock.Instant)] = [:]

    public init(initial: Duration = .seconds(2), maximum: Duration = .seconds(64)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// Records a failed authentication (a confirm or DHKey check value that did not match).
    public mutating func failed(_ peer: BluetoothAddress, at now: ContinuousClock.Instant) {
        let failures = (peers[peer]?.failures ?? 0) + 1
        var wait = initial
        for _ in 1..<failures where wait < maximum { wait = wait * 2 }
        peers[peer] = (failures, now + min(wait, maximum))
    }

    public mutating func succeeded(_ peer: BluetoothAddress) {
        peers[peer] = nil
    }

    /// How long `peer` must still wait, or nil when it may pair now.
    public func remainingWait(_ peer: BluetoothAddress, at now: ContinuousClock.Instant) -> Duration? {
        guard let entry = peers[peer], entry.until > now else { return nil }
        return entry.until - now
    }

    /// Whether this failure counts toward the backoff: only failed authentication does, not
    /// a user's choice or a capability mismatch.
    public static func counts(_ error: PairingError) -> Bool {
        switch error {
        case let .refused(reason, _), let .peerFailed(reason):
            [.confirmValueFailed, .dhKeyCheckFailed].contains(reason)
        default:
            false
        }
    }
}

/// One ``RepeatedAttempts`` record shared by every link of a host.
public final class RepeatedAttemptsRecord: Sendable {
    let record: Lock<RepeatedAttempts>

    public init(_ policy: RepeatedAttempts = RepeatedAttempts()) { record = Lock(policy) }

    public func withLock<Result>(_ body: (inout RepeatedAttempts) -> Result) -> Result {
        record.withLock { body(&$0) }
    }
}
