import BluetoothCore

// A plain-text form of a discovered database, for a cache kept between program runs. One
// line per declaration, handles in hex, so a person can read (and diff) a cached peer:
//
//     gatt-database 1
//     hash A1324A7F7865B7B4E33769DAC2D76E44
//     service 0020 0034 primary B4AE0001-7E57-4BA2-B1E0-00000000C0DE
//     include 0021 0019 001B 1804
//     characteristic 0023 02 0024 0025 B4AE0002-7E57-4BA2-B1E0-00000000C0DE
//     descriptor 0025 2901
//
// Not JSON: the core modules carry no Foundation, and this reads back with a split per
// line, totally (anything unexpected gives nil, and the caller discovers again).
extension GATTDatabase {
    static let textHeader = "gatt-database 1"

    /// The text form (see the file's comment).
    public var text: String {
        var lines = [Self.textHeader]
        if let databaseHash { lines.append("hash \(Hex.string(databaseHash))") }
        for service in services {
            lines.append("service \(hex16(service.handles.lowerBound)) \(hex16(service.handles.upperBound)) \(service.isPrimary ? "primary" : "secondary") \(service.uuid)")
            for include in service.includes {
                lines.append("include \(hex16(include.handle)) \(hex16(include.serviceHandles.lowerBound)) \(hex16(include.serviceHandles.upperBound)) \(include.uuid)")
            }
            for characteristic in service.characteristics {
                lines.append("characteristic \(hex16(characteristic.handle)) \(Hex.string([characteristic.properties.rawValue])) \(hex16(characteristic.valueHandle)) \(hex16(characteristic.endHandle)) \(characteristic.uuid)")
                for descriptor in characteristic.descriptors {
                    lines.append("descriptor \(hex16(descriptor.handle)) \(descriptor.uuid)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads the text form back; nil for anything that is not exactly that form, or that
    /// breaks the discovery rules (a damaged or foreign file is a cache miss, not an error).
    public init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(Self.textHeader), lines.count <= 100_000 else { return nil }
        var services: [Service] = []
        var hash: [UInt8]?
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ")
            func handle(_ index: Int) -> UInt16? { UInt16(fields[index], radix: 16) }
            func range(_ lower: Int, _ upper: Int) -> ClosedRange<UInt16>? {
                guard let start = handle(lower), let end = handle(upper), start > 0, start <= end else { return nil }
                return start...end
            }
            switch (fields.first, fields.count) {
            case ("hash", 2):
                guard hash == nil, services.isEmpty, let bytes = Hex.bytes(String(fields[1])), bytes.count == 16 else { return nil }
                hash = bytes
            case ("service", 5):
                guard let handles = range(1, 2), fields[3] == "primary" || fields[3] == "secondary",
                      let uuid = BluetoothUUID(String(fields[4]))
                else { return nil }
                services.append(Service(uuid: uuid, handles: handles, isPrimary: fields[3] == "primary"))
            case ("include", 5):
                guard !services.isEmpty, let own = handle(1), let target = range(2, 3),
                      let uuid = BluetoothUUID(String(fields[4]))
                else { return nil }
                services[services.count - 1].includes.append(IncludedService(handle: own, serviceHandles: target, uuid: uuid))
            case ("characteristic", 6):
                guard !services.isEmpty, let declaration = handle(1), let properties = UInt8(fields[2], radix: 16),
                      let value = handle(3), let end = handle(4), declaration < value, value <= end,
                      let uuid = BluetoothUUID(String(fields[5]))
                else { return nil }
                services[services.count - 1].characteristics.append(Characteristic(
                    handle: declaration, properties: CharacteristicProperties(rawValue: properties), valueHandle: value,
                    uuid: uuid, endHandle: end))
            case ("descriptor", 3):
                guard let last = services.indices.last, !services[last].characteristics.isEmpty,
                      let own = handle(1), let uuid = BluetoothUUID(String(fields[2]))
                else { return nil }
                let index = services[last].characteristics.count - 1
                services[last].characteristics[index].descriptors.append(Descriptor(handle: own, uuid: uuid))
            default:
                return nil
            }
        }
        self.init(services: services, databaseHash: hash)
        // Lines that each read well can still add up to a database no server could have
        // given: a cache miss too, rather than handles the peer does not have.
        guard keepsDiscoveryRules else { return nil }
    }
}
