import BluetoothCore
import HCI
import SMP

/// Connectable or broadcast advertising from our resolvable private addresses, a new one
/// every rotation interval, so that only bonded peers (who hold our IRK) can tell it is us.
///
/// How the address is changed: the set is stopped and started again with the new address.
/// On a controller with extended advertising the start sets the address with LE Set
/// Advertising Set Random Address on the set's own handle, which is allowed whatever else
/// the controller does; on a legacy controller it is LE Set Random Address, which the
/// controller refuses (Command Disallowed) while it scans or initiates. Then the set
/// goes back on the air with the old address and the change is tried again after
/// ``retryDelay``. (LE Set Advertising Set Random Address on a *running* set is refused
/// for connectable sets, so stop-and-start is the one way that works for every kind.)
///
/// The rotation runs on the injected clock's timer; stop it with ``stop()``.
public final class PrivateAdvertising<C: Clock>: Sendable where C.Duration == Duration {
    public typealias Rotation = PrivateAddressRotation<C.Instant>

    /// What happened at a rotation moment.
    public enum Event: Sendable, Equatable {
        /// The set advertises from this new address.
        case rotated(BluetoothAddress)
        /// The controller refused the change; the old address stays for now.
        case postponed(AdvertisingError)
        /// The set could not be brought back; advertising has stopped.
        case failed(AdvertisingError)
    }

    public let advertiser: Advertiser
    public let parameters: AdvertisingParameters
    public let retryDelay: Duration
    let clock: C

    struct State: Sendable {
        var rotation: Rotation
        var set: AdvertisingSet?
        var data: AdvertisingData
        var scanResponse: AdvertisingData?
        var timer: Task<Void, Never>?
    }

    let state: Lock<State>
    private let listeners = Listeners<Event>(bufferLimit: 16)

    /// Starts advertising from a fresh RPA of `identity`. `parameters.ownAddress` is
    /// replaced by the RPA.
    public init(
        advertiser: Advertiser, identity: LocalIdentity, parameters: AdvertisingParameters,
        data: AdvertisingData, scanResponse: AdvertisingData? = nil,
        interval: Duration = Rotation.defaultInterval, retryDelay: Duration = .seconds(1), clock: C
    ) async throws(AdvertisingError) {
        var generator = SystemRandomNumberGenerator()
        let rotation = Rotation(identityResolvingKey: identity.identityResolvingKey, interval: interval, now: clock.now, using: &generator)
        self.advertiser = advertiser
        self.parameters = parameters
        self.retryDelay = retryDelay
        self.clock = clock
        self.state = Lock(State(rotation: rotation, data: data, scanResponse: scanResponse))
        let set = try await start(from: rotation.address)
        // Weak between ticks: dropping the last reference ends the rotation (deinit cancels).
        let timer = Task { [weak self, clock] in
            while !Task.isCancelled {
                guard let expiry = self?.state.withLock({ $0.rotation.expiry }) else { return }
                do {
                    try await clock.sleep(until: expiry, tolerance: nil)
                } catch {
                    return  // cancelled
                }
                await self?.rotateIfDue()
            }
        }
        state.withLock {
            $0.set = set
            $0.timer = timer
        }
    }

    /// The RPA on the air now.
    public var address: BluetoothAddress { state.withLock { $0.rotation.address } }

    /// The running set (a new one after every rotation).
    public var advertisingSet: AdvertisingSet? { state.withLock { $0.set } }

    /// Rotation events from now on, for as long as the stream is iterated.
    public func events() -> AsyncStream<Event> { listeners.stream() }

    /// Stops rotating and advertising.
    public func stop() async throws(AdvertisingError) {
        let (timer, set) = state.withLock { state in
            defer { state.timer = nil; state.set = nil }
            return (state.timer, state.set)
        }
        timer?.cancel()
        try await set?.stop()
        listeners.finish()
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
    }

    // MARK: Rotation

    /// Replaces the address when the rotation says it is due (the timer calls this; a
    /// caller that knows the controller just went idle may call it too).
    public func rotateIfDue() async {
        var generator = SystemRandomNumberGenerator()
        let now = clock.now
        let change: (old: BluetoothAddress, new: BluetoothAddress, set: AdvertisingSet?)? = state.withLock { state in
            let old = state.rotation.address
            guard let new = state.rotation.rotateIfDue(at: now, using: &generator) else { return nil }
            return (old, new, state.set)
        }
        guard let change, let set = change.set else { return }
        do throws(AdvertisingError) {
            try await set.stop()
        } catch {
            postpone(change.old, now: now, reason: error)
            return
        }
        do throws(AdvertisingError) {
            let started = try await start(from: change.new)
            state.withLock { $0.set = started }
            publish(.rotated(change.new))
        } catch {
            postpone(change.old, now: now, reason: error)
            // Back on the air with the address the controller still holds.
            do throws(AdvertisingError) {
                let restarted = try await start(from: change.old)
                state.withLock { $0.set = restarted }
            } catch {
                state.withLock { $0.set = nil; $0.timer?.cancel() }
                publish(.failed(error))
            }
        }
    }

    private func postpone(_ old: BluetoothAddress, now: C.Instant, reason: AdvertisingError) {
        state.withLock { $0.rotation.postpone(old, until: now.advanced(by: retryDelay)) }
        publish(.postponed(reason))
    }

    private func start(from address: BluetoothAddress) async throws(AdvertisingError) -> AdvertisingSet {
        var parameters = parameters
        parameters.ownAddress = .random(address)
        let (data, scanResponse) = state.withLock { ($0.data, $0.scanResponse) }
        return try await advertiser.start(parameters, data: data, scanResponse: scanResponse)
    }

    private func publish(_ event: Event) {
        listeners.yield(event)
    }
}

extension PrivateAdvertising where C == ContinuousClock {
    /// ``init(advertiser:identity:parameters:data:scanResponse:interval:retryDelay:clock:)``
    /// on the system's monotonic clock.
    public convenience init(
        advertiser: Advertiser, identity: LocalIdentity, parameters: AdvertisingParameters,
        data: AdvertisingData, scanResponse: AdvertisingData? = nil,
        interval: Duration = Rotation.defaultInterval, retryDelay: Duration = .seconds(1)
    ) async throws(AdvertisingError) {
        try await self.init(
            advertiser: advertiser, identity: identity, parameters: parameters, data: data, scanResponse: scanResponse,
            interval: interval, retryDelay: retryDelay, clock: ContinuousClock())
    }
}
