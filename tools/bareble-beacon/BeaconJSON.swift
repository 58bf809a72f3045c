import Beacon
import BluetoothCore
import ToolSupport

/// The identity fields of a beacon in JSON output: a `beacon` string (the human form, also
/// what the table shows) plus the format's fields, so scripts need not parse the string.
func identityMembers(_ identity: BeaconIdentity) -> [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("beacon", .string(identity.description))]
    switch identity {
    case let .iBeacon(uuid, major, minor):
        members += [("type", .string("iBeacon")), ("uuid", .string(uuid.uuidString128)), ("major", .int(Int(major))), ("minor", .int(Int(minor)))]
    case let .eddystoneUID(namespace, instance):
        members += [("type", .string("eddystone-uid")), ("namespace", .string(Hex.string(namespace))), ("instance", .string(Hex.string(instance)))]
    case let .eddystoneURL(url):
        members += [("type", .string("eddystone-url")), ("url", .string(url))]
    case let .eddystoneEID(identifier):
        members += [("type", .string("eddystone-eid")), ("eid", .string(Hex.string(identifier)))]
    case let .altBeacon(beaconID):
        members += [("type", .string("altbeacon")), ("id", .string(Hex.string(beaconID)))]
    }
    return members
}

/// Seconds between two monotonic readings, for "last seen" and event times.
func seconds(from start: UInt64, to end: UInt64) -> Double {
    end >= start ? Double(end - start) / 1e9 : 0
}
