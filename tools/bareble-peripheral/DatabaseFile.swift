import ATT
import BluetoothCore
import GATT
import ToolSupport

/// A database as `bareble-central explore --json` prints it, to serve again: its services
/// with their characteristics (UUID, properties, last-read value) and descriptors. The
/// file's GAP and GATT services are not served (our server adds its own); their Device
/// Name and Appearance become ours.
struct DatabaseFile {
    var services: [GATTDatabase.Service]
    var deviceName: String?
    var appearance: UInt16?

    static let genericAccess = BluetoothUUID(UInt16(0x1800))
    static let genericAttribute = BluetoothUUID(UInt16(0x1801))

    init(path: String) throws {
        let json: JSONValue
        do { json = try JSONValue(contentsOf: path) } catch { throw ToolError("--database \(path): \(error)") }
        guard let services = json["services"]?.arrayValue else {
            throw ToolError("--database \(path) has no \"services\": give what `bareble-central explore --json` prints")
        }
        self.services = []
        for service in services {
            guard let uuid = service["uuid"]?.stringValue.flatMap(BluetoothUUID.init) else {
                throw ToolError("--database \(path): a service without a UUID")
            }
            let characteristics = try (service["characteristics"]?.arrayValue ?? []).map { try Self.characteristic($0, path: path) }
            switch uuid {
            case Self.genericAccess:
                deviceName = characteristics.first { $0.uuid == GATTUUID.deviceName }?.value.map { String(decoding: $0, as: UTF8.self) }
                appearance = characteristics.first { $0.uuid == GATTUUID.appearance }?.value
                    .flatMap { $0.count == 2 ? UInt16($0[0]) | UInt16($0[1]) << 8 : nil }
            case Self.genericAttribute:
                break
            default:
                self.services.append(GATTDatabase.Service(
                    uuid: uuid, isPrimary: service["primary"]?.boolValue ?? true,
                    includes: (service["includes"]?.arrayValue ?? []).compactMap { include in
                        include["uuid"]?.stringValue.flatMap(BluetoothUUID.init).map { GATTDatabase.IncludedService(uuid: $0) }
                    },
                    characteristics: characteristics))
            }
        }
    }

    static func characteristic(_ json: JSONValue, path: String) throws -> GATTDatabase.Characteristic {
        guard let uuid = json["uuid"]?.stringValue.flatMap(BluetoothUUID.init), let properties = json["properties"]?.intValue,
            (0...0xFF).contains(properties)
        else { throw ToolError("--database \(path): a characteristic without a UUID or properties") }
        let descriptors = (json["descriptors"]?.arrayValue ?? []).compactMap { descriptor -> GATTDatabase.Descriptor? in
            guard let uuid = descriptor["uuid"]?.stringValue.flatMap(BluetoothUUID.init) else { return nil }
            // A CCCD's value is each client's own: the server keeps it per link.
            guard uuid != GATTUUID.clientCharacteristicConfiguration else { return GATTDatabase.Descriptor(uuid: uuid) }
            return GATTDatabase.Descriptor(uuid: uuid, value: descriptor["value"]?.stringValue.flatMap(Hex.bytes) ?? [])
        }
        // A value the explorer could not read is served empty.
        let value = json["value"]?.stringValue.flatMap(Hex.bytes) ?? []
        return GATTDatabase.Characteristic(
            uuid: uuid, properties: CharacteristicProperties(rawValue: UInt8(properties)), value: value, descriptors: descriptors)
    }
}
