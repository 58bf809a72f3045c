import BluetoothCore
import HCI

/// What makes two advertisements "the same beacon" for ranging and region monitoring: the
/// identifiers the format carries, never the Bluetooth address (beacons may rotate it, and
/// one device may transmit several beacons).
public enum BeaconIdentity: Sendable, Hashable, Comparable, CustomStringConvertible {
    case iBeacon(proximityUUID: BluetoothUUID, major: UInt16, minor: UInt16)
    case eddystoneUID(namespace: [UInt8], instance: [UInt8])
    /// An ephemeral identifier is its own identity until a resolver maps it to a beacon.
    case eddystoneEID([UInt8])
    case eddystoneURL(String)
    case altBeacon(beaconID: [UInt8])

    public var description: String {
        switch self {
        case let .iBeacon(uuid, major, minor): "iBeacon \(uuid.uuidString128) \(major) \(minor)"
        case let .eddystoneUID(namespace, instance): "Eddystone-UID \(Hex.string(namespace))/\(Hex.string(instance))"
        case let .eddystoneEID(identifier): "Eddystone-EID \(Hex.string(identifier))"
        case let .eddystoneURL(url): "Eddystone-URL \(url)"
        case let .altBeacon(beaconID): "AltBeacon \(Hex.string(beaconID))"
        }
    }

    /// An arbitrary but stable order, used only to break ties so output is deterministic.
    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool { lhs.description < rhs.description }
}

/// Any beacon frame this module decodes.
public enum BeaconFrame: Sendable, Hashable, CustomStringConvertible {
    case iBeacon(IBeacon)
    case eddystone(EddystoneFrame)
    case altBeacon(AltBeacon)

    /// Eddystone calibrates at 0 m; its specification says a receiver at 1 m sees about
    /// 41 dB less, which puts every format on the same 1 m reference for ranging.
    public static let eddystoneLossAtOneMeter = 41

    /// The first beacon frame in `data`, trying iBeacon, Eddystone, then AltBeacon; nil
    /// when none is there or what is there is malformed (see each format's `decode` for
    /// the reason).
    public static func decode(_ data: AdvertisingData) -> BeaconFrame? {
        if let frame = IBeacon.decode(data).frame { return .iBeacon(frame) }
        if let frame = EddystoneFrame.decode(data).frame { return .eddystone(frame) }
        if let frame = AltBeacon.decode(data).frame { return .altBeacon(frame) }
        return nil
    }

    /// The beacon in an advertisement, looking at the advertising data and scan response
    /// together (an Eddystone transmitter may put its frame in either).
    public static func decode(_ advertisement: Advertisement) -> BeaconFrame? {
        if let frame = decode(advertisement.advertisingData) { return frame }
        guard let response = advertisement.scanResponseData else { return nil }
        return decode(.merged(advertising: advertisement.advertisingData, scanResponse: response))
    }

    /// Nil for Eddystone-TLM, which identifies nothing on its own.
    public var identity: BeaconIdentity? {
        switch self {
        case let .iBeacon(beacon): .iBeacon(proximityUUID: beacon.proximityUUID, major: beacon.major, minor: beacon.minor)
        case let .eddystone(.uid(frame)): .eddystoneUID(namespace: frame.namespace, instance: frame.instance)
        case let .eddystone(.eid(frame)): .eddystoneEID(frame.ephemeralIdentifier)
        case let .eddystone(.url(frame)): .eddystoneURL(frame.url)
        case .eddystone(.tlm): nil
        case let .altBeacon(beacon): .altBeacon(beaconID: beacon.beaconID)
        }
    }

    /// The RSSI in dBm expected at 1 m, the path-loss model's reference point.
    public var measuredPowerAtOneMeter: Int? {
        switch self {
        case let .iBeacon(beacon): Int(beacon.measuredPower)
        case let .altBeacon(beacon): Int(beacon.referenceRSSI)
        case let .eddystone(frame): frame.txPower.map { Int($0) - Self.eddystoneLossAtOneMeter }
        }
    }

    public var description: String {
        switch self {
        case let .iBeacon(beacon): beacon.description
        case let .eddystone(frame): frame.description
        case let .altBeacon(beacon): beacon.description
        }
    }
}
