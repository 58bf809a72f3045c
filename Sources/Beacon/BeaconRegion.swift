import BluetoothCore

/// A set of beacons to monitor (Core Location's CLBeaconRegion, plus Eddystone-UID
/// namespaces). The identifier names the region to the user and in events; two regions
/// with the same identifier are the same region, and monitoring one replaces the other.
public struct BeaconRegion: Sendable, Hashable, CustomStringConvertible {
    /// Which identities belong to the region.
    public enum Constraint: Sendable, Hashable {
        case iBeacon(proximityUUID: BluetoothUUID)
        case iBeaconMajor(proximityUUID: BluetoothUUID, major: UInt16)
        case iBeaconMajorMinor(proximityUUID: BluetoothUUID, major: UInt16, minor: UInt16)
        case eddystoneNamespace([UInt8])
        case eddystoneInstance(namespace: [UInt8], instance: [UInt8])
    }

    public var identifier: String
    public var constraint: Constraint

    public init(identifier: String, constraint: Constraint) {
        self.identifier = identifier
        self.constraint = constraint
    }

    /// An iBeacon region: every beacon with the UUID, or only those with `major`, or only
    /// the one with `major` and `minor` (a minor needs a major, as in Core Location).
    public static func iBeacon(_ identifier: String, proximityUUID: BluetoothUUID, major: UInt16? = nil, minor: UInt16? = nil) throws(BeaconRegionError) -> BeaconRegion {
        switch (major, minor) {
        case (nil, nil): BeaconRegion(identifier: identifier, constraint: .iBeacon(proximityUUID: proximityUUID))
        case let (major?, nil): BeaconRegion(identifier: identifier, constraint: .iBeaconMajor(proximityUUID: proximityUUID, major: major))
        case let (major?, minor?): BeaconRegion(identifier: identifier, constraint: .iBeaconMajorMinor(proximityUUID: proximityUUID, major: major, minor: minor))
        case (nil, .some): throw .minorWithoutMajor(identifier)
        }
    }

    /// An Eddystone-UID region: a 10-octet namespace, optionally narrowed to a 6-octet
    /// instance.
    public static func eddystone(_ identifier: String, namespace: [UInt8], instance: [UInt8]? = nil) throws(BeaconRegionError) -> BeaconRegion {
        guard namespace.count == EddystoneUID.namespaceLength else {
            throw .wrongIdentifierLength(identifier, field: "namespace", expected: EddystoneUID.namespaceLength, actual: namespace.count)
        }
        guard let instance else { return BeaconRegion(identifier: identifier, constraint: .eddystoneNamespace(namespace)) }
        guard instance.count == EddystoneUID.instanceLength else {
            throw .wrongIdentifierLength(identifier, field: "instance", expected: EddystoneUID.instanceLength, actual: instance.count)
        }
        return BeaconRegion(identifier: identifier, constraint: .eddystoneInstance(namespace: namespace, instance: instance))
    }

    /// Whether a beacon with `identity` is in the region.
    public func contains(_ identity: BeaconIdentity) -> Bool {
        switch (constraint, identity) {
        case let (.iBeacon(uuid), .iBeacon(candidate, _, _)):
            uuid == candidate
        case let (.iBeaconMajor(uuid, major), .iBeacon(candidate, candidateMajor, _)):
            uuid == candidate && major == candidateMajor
        case let (.iBeaconMajorMinor(uuid, major, minor), .iBeacon(candidate, candidateMajor, candidateMinor)):
            uuid == candidate && major == candidateMajor && minor == candidateMinor
        case let (.eddystoneNamespace(namespace), .eddystoneUID(candidate, _)):
            namespace == candidate
        case let (.eddystoneInstance(namespace, instance), .eddystoneUID(candidateNamespace, candidateInstance)):
            namespace == candidateNamespace && instance == candidateInstance
        default:
            false
        }
    }

    public var description: String {
        switch constraint {
        case let .iBeacon(uuid): "\(identifier) (iBeacon \(uuid.uuidString128))"
        case let .iBeaconMajor(uuid, major): "\(identifier) (iBeacon \(uuid.uuidString128) \(major))"
        case let .iBeaconMajorMinor(uuid, major, minor): "\(identifier) (iBeacon \(uuid.uuidString128) \(major) \(minor))"
        case let .eddystoneNamespace(namespace): "\(identifier) (Eddystone \(Hex.string(namespace)))"
        case let .eddystoneInstance(namespace, instance): "\(identifier) (Eddystone \(Hex.string(namespace))/\(Hex.string(instance)))"
        }
    }
}

/// Why a region could not be made.
public enum BeaconRegionError: Error, Sendable, Hashable, CustomStringConvertible {
    case minorWithoutMajor(String)
    case wrongIdentifierLength(String, field: String, expected: Int, actual: Int)

    public var description: String {
        switch self {
        case let .minorWithoutMajor(identifier):
            "region \(identifier): a minor needs a major; give both or neither"
        case let .wrongIdentifierLength(identifier, field, expected, actual):
            "region \(identifier): the Eddystone \(field) has \(actual) bytes; it must have exactly \(expected)"
        }
    }
}
