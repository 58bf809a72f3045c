import BluetoothCore

/// Which advertisements one consumer wants, applied on the host before its
/// ``DuplicatePolicy``. Every condition given must hold; an empty filter passes everything.
public struct ScanFilter: Sendable, Hashable {
    /// Any of these service UUIDs, in the advertising data or the scan response (as
    /// CoreBluetooth's scanForPeripherals(withServices:)). Empty: no condition.
    public var services: [BluetoothUUID]
    /// The local name (complete, else shortened) starts with this.
    public var namePrefix: String?
    /// Reports weaker than this (dBm) are dropped, as are reports without an RSSI.
    public var minimumRSSI: Int8?
    /// Only these devices. Empty: no condition.
    public var addresses: Set<DeviceAddress>
    public var duplicates: DuplicatePolicy
    /// How many devices the duplicate policy remembers; the least recently seen is
    /// forgotten first (and counts as new when it comes back).
    public var trackedDeviceLimit: Int

    public static let defaultTrackedDeviceLimit = 1024

    public init(
        services: [BluetoothUUID] = [],
        namePrefix: String? = nil,
        minimumRSSI: Int8? = nil,
        addresses: Set<DeviceAddress> = [],
        duplicates: DuplicatePolicy = .all,
        trackedDeviceLimit: Int = ScanFilter.defaultTrackedDeviceLimit
    ) {
        self.services = services
        self.namePrefix = namePrefix
        self.minimumRSSI = minimumRSSI
        self.addresses = addresses
        self.duplicates = duplicates
        self.trackedDeviceLimit = max(1, trackedDeviceLimit)
    }

    /// Cheap conditions first: the address and RSSI are fields, while names and UUIDs
    /// parse the data.
    public func matches(_ advertisement: Advertisement) -> Bool {
        if !addresses.isEmpty, !addresses.contains(advertisement.address) { return false }
        if let minimumRSSI {
            guard let rssi = advertisement.rssi, rssi >= minimumRSSI else { return false }
        }
        if let namePrefix, !matches(name: advertisement.localName, prefix: namePrefix) { return false }
        if !services.isEmpty, !matches(services: advertisement.serviceUUIDs) { return false }
        return true
    }

    func matches(name: String?, prefix: String) -> Bool {
        guard let name else { return false }
        return name.hasPrefix(prefix)
    }

    func matches(services advertised: [BluetoothUUID]) -> Bool {
        advertised.contains { services.contains($0) }
    }
}
