import Bonding
import BluetoothCore
import HCI

/// What a ``PeripheralHost`` has on the air: a plain set, or one that moves to a new
/// resolvable private address of ours every rotation interval (privacy).
enum Broadcast: Sendable {
    case plain(AdvertisingSet)
    case rotating(PrivateAdvertising<ContinuousClock>)

    /// Starts the advertising `options` describe, from our RPA when `identity` is given.
    static func start(_ options: PeripheralHost.Options, advertiser: Advertiser, identity: LocalIdentity?) async throws(AdvertisingError) -> Broadcast {
        if let identity {
            return .rotating(try await PrivateAdvertising(
                advertiser: advertiser, identity: identity, parameters: options.advertising,
                data: options.data, scanResponse: options.scanResponse, interval: options.addressRotation))
        }
        return .plain(try await advertiser.start(options.advertising, data: options.data, scanResponse: options.scanResponse))
    }

    /// The address centrals see and connect to now.
    var address: DeviceAddress {
        switch self {
        case let .plain(set): set.address
        case let .rotating(rotating): DeviceAddress(rotating.address, type: .random)
        }
    }

    var isAdvertising: Bool {
        switch self {
        case let .plain(set): set.state == .advertising
        case let .rotating(rotating): rotating.advertisingSet?.state == .advertising
        }
    }

    /// Takes the set off the air (nothing to do when a connection already ended it).
    func stop() async throws(AdvertisingError) {
        switch self {
        case let .plain(set): try await set.stop()
        case let .rotating(rotating): try await rotating.stop()
        }
    }
}
