import BluetoothCore
import GATT
import Synchronization

/// The GATT databases a ``Central`` has discovered, per peer, each with its Database Hash
/// (GATT Caching, Core 5.4 Vol 3 Part G 2.5.2): handed to
/// ``GATTClient/discover(remembered:)`` on the next connection, which reads the hash and
/// skips discovery when it is unchanged.
///
/// In memory only: without bonding a peer's address is no promise of the same database,
/// and the hash check makes a stale copy harmless. Persisting it belongs with the bond
/// store that pairing will bring.
public final class GATTCache: Sendable {
    private let databases = Mutex<[DeviceAddress: GATTDatabase]>([:])

    public init() {}

    public func database(for peer: DeviceAddress) -> GATTDatabase? {
        databases.withLock { $0[peer] }
    }

    /// Remembers `database` when it carries a Database Hash (without one a remembered copy
    /// could never be confirmed, so it would only cost memory).
    public func remember(_ database: GATTDatabase, for peer: DeviceAddress) {
        guard database.databaseHash != nil else { return }
        databases.withLock { $0[peer] = database }
    }

    public func forget(_ peer: DeviceAddress) {
        _ = databases.withLock { $0.removeValue(forKey: peer) }
    }

    public var peers: [DeviceAddress] {
        databases.withLock { Array($0.keys) }.sorted { $0.description < $1.description }
    }
}
