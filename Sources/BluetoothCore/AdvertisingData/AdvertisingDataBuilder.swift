/// Builds advertising or scan response data, refusing anything that does not fit.
///
/// ```swift
/// var builder = AdvertisingDataBuilder()
/// builder.flags(.generalDiscoverableLEOnly)
/// builder.serviceUUIDs([BluetoothUUID(UInt16(0x180D))])
/// builder.localName("Thermometer", shortenedNameToFit: true)
/// let data = try builder.build()            // legacy advertising: 31 bytes
/// ```
///
/// Structures come out in the order their elements were first added. Single-valued
/// elements (flags, name, TX power, appearance, URI, advertising interval) replace an
/// earlier value in place; service and solicitation UUIDs accumulate into one list per
/// UUID width, because the Supplement Part A 1.1 allows one list of each size; service
/// data, manufacturer data and raw structures are each a structure of their own.
public struct AdvertisingDataBuilder: Sendable {
    /// What one legacy advertising or scan response PDU carries (Core Vol 6 Part B 2.3.1).
    public static let legacyLimit = 31
    /// What one LE Set Extended Advertising Data command carries (Core Vol 4 Part E 7.8.54).
    public static let extendedFragmentLimit = 251
    /// The most extended advertising data a controller may accept
    /// (Core Vol 4 Part E 7.8.57, Maximum Advertising Data Length).
    public static let extendedLimit = 1650

    enum Element: Sendable {
        case flags(ADFlags)
        case localName(String, shorten: Bool)
        case serviceUUIDs([BluetoothUUID], complete: Bool)
        case solicitedServiceUUIDs([BluetoothUUID])
        case serviceData(BluetoothUUID, [UInt8])
        case manufacturerData(UInt16, [UInt8])
        case txPowerLevel(Int8)
        case appearance(Appearance)
        case uri(String)
        case advertisingInterval(AdvertisingInterval)
        case raw(ADType, [UInt8])

        /// Which elements replace one another; nil for those that are each their own.
        var slot: Int? {
            switch self {
            case .flags: 0
            case .localName: 1
            case .serviceUUIDs: 2
            case .solicitedServiceUUIDs: 3
            case .txPowerLevel: 4
            case .appearance: 5
            case .uri: 6
            case .advertisingInterval: 7
            case .serviceData, .manufacturerData, .raw: nil
            }
        }
    }

    private(set) var elements: [Element] = []

    public init() {}

    public mutating func flags(_ flags: ADFlags) { put(.flags(flags)) }

    /// The local name. Too long for the space left, it is an overflow error unless
    /// `shortenedNameToFit`, which sends a Shortened Local Name cut at a character
    /// boundary to what fits (as CoreBluetooth does in the scan response).
    public mutating func localName(_ name: String, shortenedNameToFit: Bool = false) {
        put(.localName(name, shorten: shortenedNameToFit))
    }

    /// Service UUIDs, one list per width (16, 32, 128 bit). `complete` says the peer has no
    /// other services; it applies to every list and a later call's value wins.
    public mutating func serviceUUIDs(_ uuids: [BluetoothUUID], complete: Bool = true) {
        if let index = index(ofSlot: 2), case let .serviceUUIDs(earlier, _) = elements[index] {
            elements[index] = .serviceUUIDs(earlier + uuids, complete: complete)
        } else {
            elements.append(.serviceUUIDs(uuids, complete: complete))
        }
    }

    /// Services the advertiser wants a central to offer (ANCS solicits its 128-bit UUID).
    public mutating func solicitedServiceUUIDs(_ uuids: [BluetoothUUID]) {
        if let index = index(ofSlot: 3), case let .solicitedServiceUUIDs(earlier) = elements[index] {
            elements[index] = .solicitedServiceUUIDs(earlier + uuids)
        } else {
            elements.append(.solicitedServiceUUIDs(uuids))
        }
    }

    /// Service Data; the AD type follows the UUID's shortest width.
    public mutating func serviceData(_ uuid: BluetoothUUID, _ data: [UInt8]) {
        elements.append(.serviceData(uuid, data))
    }

    public mutating func manufacturerData(companyID: UInt16, _ data: [UInt8]) {
        elements.append(.manufacturerData(companyID, data))
    }

    public mutating func txPowerLevel(_ dBm: Int8) { put(.txPowerLevel(dBm)) }

    public mutating func appearance(_ appearance: Appearance) { put(.appearance(appearance)) }

    /// A URI; its scheme is compressed to one code point when the Assigned Numbers list it.
    public mutating func uri(_ uri: String) { put(.uri(uri)) }

    /// The 2-octet form when the interval fits in 16 bits, else Advertising Interval - long.
    public mutating func advertisingInterval(_ interval: AdvertisingInterval) {
        put(.advertisingInterval(interval))
    }

    /// Any structure, as given: for AD types without a method here.
    public mutating func raw(_ type: ADType, _ data: [UInt8]) { elements.append(.raw(type, data)) }

    /// The bytes, or the first reason they cannot be built within `limit`.
    public func build(limit: Int = legacyLimit) throws(AdvertisingDataError) -> AdvertisingData {
        guard (0...Self.extendedLimit).contains(limit) else { throw .invalidLimit(limit) }
        var encoded: [[Structure]] = []
        encoded.reserveCapacity(elements.count)
        var nameIndex: Int?
        for element in elements {
            if case .localName = element { nameIndex = encoded.count }
            encoded.append(try Self.encode(element))
        }
        if let nameIndex, case let .localName(name, shorten) = elements[nameIndex], shorten {
            let others = encoded.enumerated().reduce(0) { total, entry in
                entry.offset == nameIndex ? total : total + entry.element.reduce(0) { $0 + $1.size }
            }
            // What is left for the name's data once every other structure and the name's
            // own two header octets are in.
            let room = min(limit - others - 2, 254)
            let shortened = Self.prefix(of: name, maximumBytes: room)
            // When not even one character fits, the complete name stays and overflows, so
            // the error names it rather than sending an empty name.
            if room < encoded[nameIndex][0].data.count, !shortened.isEmpty {
                encoded[nameIndex] = [Structure(label: "shortened local name", type: .shortenedLocalName, data: shortened)]
            }
        }
        var writer = ByteWriter(capacity: limit)
        for structure in encoded.joined() {
            let available = limit - writer.bytes.count
            guard structure.size <= available else {
                throw .overflow(element: structure.label, needed: structure.size, available: available, limit: limit)
            }
            writer.write(UInt8(structure.data.count + 1))
            writer.write(structure.type.rawValue)
            writer.write(contentsOf: structure.data)
        }
        return AdvertisingData(writer.bytes)
    }

    // MARK: - Encoding

    struct Structure {
        let label: String
        let type: ADType
        let data: [UInt8]
        var size: Int { data.count + 2 }
    }

    private mutating func put(_ element: Element) {
        if let slot = element.slot, let index = index(ofSlot: slot) {
            elements[index] = element
        } else {
            elements.append(element)
        }
    }

    private func index(ofSlot slot: Int) -> Int? {
        elements.firstIndex { $0.slot == slot }
    }

    private static func encode(_ element: Element) throws(AdvertisingDataError) -> [Structure] {
        let structures: [Structure]
        switch element {
        case let .flags(flags):
            structures = [Structure(label: "flags", type: .flags, data: [flags.rawValue])]
        case let .localName(name, _):
            structures = [Structure(label: "complete local name", type: .completeLocalName, data: Array(name.utf8))]
        case let .serviceUUIDs(uuids, complete):
            guard !uuids.isEmpty else { throw .emptyList(element: "service UUIDs") }
            let types: [ADType] = complete
                ? [.completeListOf16BitServiceUUIDs, .completeListOf32BitServiceUUIDs, .completeListOf128BitServiceUUIDs]
                : [.incompleteListOf16BitServiceUUIDs, .incompleteListOf32BitServiceUUIDs, .incompleteListOf128BitServiceUUIDs]
            structures = uuidLists(uuids, types: types, noun: "service UUIDs")
        case let .solicitedServiceUUIDs(uuids):
            guard !uuids.isEmpty else { throw .emptyList(element: "solicited service UUIDs") }
            let types: [ADType] = [
                .listOf16BitServiceSolicitationUUIDs, .listOf32BitServiceSolicitationUUIDs,
                .listOf128BitServiceSolicitationUUIDs,
            ]
            structures = uuidLists(uuids, types: types, noun: "solicited service UUIDs")
        case let .serviceData(uuid, data):
            let type: ADType = switch uuid.byteWidth {
            case 2: .serviceData16BitUUID
            case 4: .serviceData32BitUUID
            default: .serviceData128BitUUID
            }
            structures = [Structure(label: "service data (\(uuid))", type: type, data: uuid.littleEndianBytes + data)]
        case let .manufacturerData(companyID, data):
            let id = Hex.string([UInt8(companyID >> 8), UInt8(companyID & 0xFF)])
            let bytes = [UInt8(companyID & 0xFF), UInt8(companyID >> 8)] + data
            structures = [Structure(label: "manufacturer data (0x\(id))", type: .manufacturerSpecificData, data: bytes)]
        case let .txPowerLevel(dBm):
            structures = [Structure(label: "TX power level", type: .txPowerLevel, data: [UInt8(bitPattern: dBm)])]
        case let .appearance(appearance):
            let value = appearance.rawValue
            structures = [Structure(label: "appearance", type: .appearance, data: [UInt8(value & 0xFF), UInt8(value >> 8)])]
        case let .uri(uri):
            structures = [Structure(label: "URI", type: .uri, data: URIScheme.compress(uri))]
        case let .advertisingInterval(interval):
            let units = UInt64(interval.units)
            let width = units <= 0xFFFF ? 2 : units <= 0xFF_FFFF ? 3 : 4
            var writer = ByteWriter(capacity: width)
            writer.writeLittleEndian(units, width: width)
            let type: ADType = width == 2 ? .advertisingInterval : .advertisingIntervalLong
            structures = [Structure(label: "advertising interval", type: type, data: writer.bytes)]
        case let .raw(type, data):
            structures = [Structure(label: type.description, type: type, data: data)]
        }
        // A name that may be shortened is cut to fit later, whatever its length.
        if case .localName(_, shorten: true) = element { return structures }
        for structure in structures where structure.data.count > 254 {
            throw .structureTooLong(element: structure.label, length: structure.data.count)
        }
        return structures
    }

    /// One structure per UUID width present, 16-bit first, each UUID in its shortest form.
    private static func uuidLists(_ uuids: [BluetoothUUID], types: [ADType], noun: String) -> [Structure] {
        [(2, "16-bit"), (4, "32-bit"), (16, "128-bit")].enumerated().compactMap { index, width in
            let members = uuids.filter { $0.byteWidth == width.0 }
            guard !members.isEmpty else { return nil }
            return Structure(label: "\(width.1) \(noun)", type: types[index], data: members.flatMap(\.littleEndianBytes))
        }
    }

    /// The longest prefix of `name` that is whole characters and at most `maximumBytes`
    /// of UTF-8, so a shortened name never ends in a broken code point.
    static func prefix(of name: String, maximumBytes: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        guard maximumBytes > 0 else { return bytes }
        for character in name {
            let utf8 = character.utf8
            guard bytes.count + utf8.count <= maximumBytes else { break }
            bytes.append(contentsOf: utf8)
        }
        return bytes
    }
}
