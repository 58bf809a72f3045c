import BluetoothCore
import ATT

/// What our server keeps for one bearer (one client): its CCCDs, its Client Supported
/// Features and where it stands in robust caching (Core 5.4 Vol 3 Part G 2.5.2.1).
struct GATTServerClient: Sendable, Hashable {
    /// By characteristic value handle; absent means 0x0000.
    var configurations: [UInt16: ClientCharacteristicConfiguration] = [:]
    var supportedFeatures: GATTClientSupportedFeatures = []
    /// A client without a bond starts change-aware (2.5.2.1).
    var isChangeAware = true
    /// Database Out Of Sync went to it since it became change-unaware: its next request
    /// makes it change-aware.
    var sentOutOfSync = false
    /// It read the Database Hash while change-unaware: its next request makes it
    /// change-aware.
    var readHashWhileUnaware = false
    /// Its bearer's ``ATTServerContext/instance``.
    var instance: UInt64 = 0

    /// The database changed under it.
    mutating func becomeChangeUnaware() {
        isChangeAware = false
        sentOutOfSync = false
        readHashWhileUnaware = false
    }
}

/// What a bond keeps of one client between connections (Part G 2.5.2.1, 3.3.3.3: CCCDs and
/// Client Supported Features persist for a bonded client), with the Database Hash it was
/// taken under so the client comes back change-unaware when the database changed since.
public struct GATTBondedClientState: Sendable, Hashable {
    /// CCCD values by characteristic value handle.
    public var configurations: [UInt16: UInt16]
    /// The type of the characteristic at each configured value handle when the state was
    /// taken: a CCCD is restored only onto the same type (empty in states saved before
    /// types were kept).
    public var characteristicTypes: [UInt16: BluetoothUUID]
    public var supportedFeatures: UInt8
    public var databaseHash: [UInt8]
    /// Whether the client was change-aware when the state was taken.
    public var wasChangeAware: Bool

    public init(
        configurations: [UInt16: UInt16], characteristicTypes: [UInt16: BluetoothUUID] = [:], supportedFeatures: UInt8,
        databaseHash: [UInt8], wasChangeAware: Bool
    ) {
        self.configurations = configurations
        self.characteristicTypes = characteristicTypes
        self.supportedFeatures = supportedFeatures
        self.databaseHash = databaseHash
        self.wasChangeAware = wasChangeAware
    }
}

/// What adding or removing services changed: the range the driver indicates in Service
/// Changed (Part G 7.1), and to whom.
public struct GATTServerChange: Sendable, Hashable {
    /// The handles added or removed.
    public var changedHandles: ClosedRange<UInt16>
    /// The Service Changed characteristic's value handle, to indicate on.
    public var serviceChangedHandle: UInt16?
    /// The bearers whose Service Changed CCCD has indications on, ascending.
    public var subscribers: [UInt16]

    /// The indication's value: the first and last changed handle, little-endian.
    public var serviceChangedValue: [UInt8] {
        let (start, end) = (changedHandles.lowerBound, changedHandles.upperBound)
        return [UInt8(start & 0xFF), UInt8(start >> 8), UInt8(end & 0xFF), UInt8(end >> 8)]
    }
}
