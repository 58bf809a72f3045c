import Beacon
import BluetoothCore

/// An advertising report's data as fields: each AD structure by its type's name, with the
/// beacon frames (iBeacon, Eddystone, AltBeacon) and the ANCS solicitation recognised.
enum AdvertisingFields {
    static let ancs = BluetoothUUID("7905F431-B5CE-4E99-A40F-4B1E122D00D0")

    static func of(_ bytes: [UInt8]) -> [(String, String)] {
        let data = AdvertisingData(bytes)
        var fields: [(String, String)] = []
        for structure in data.structures {
            let name = (structure.type.name ?? "AD type 0x" + HCIEventNames.hex(structure.type.rawValue))
            fields.append((name, Hex.string(Array(structure.data))))
        }
        if let localName = data.localName { fields.append(("name", localName)) }
        if let beacon = BeaconFrame.decode(data) { fields.append(("beacon", "\(beacon)")) }
        if let ancs, data.solicitedServiceUUIDs.contains(ancs) { fields.append(("solicits", "Apple Notification Center Service")) }
        for malformation in data.malformations { fields.append(("malformed", "\(malformation)")) }
        return fields
    }
}
