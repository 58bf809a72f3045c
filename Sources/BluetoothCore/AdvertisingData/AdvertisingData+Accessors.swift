// Typed views of the AD types a scanner meets (Core Specification Supplement Part A 1).
// Each one walks the structures when asked; the rule for content that breaks the format
// is "keep what is well formed": whole UUIDs from a list with a partial one, nothing from
// a TX power of the wrong length. ``AdvertisingData/malformations`` reports the rest.

extension AdvertisingData {
    /// The Flags (Supplement Part A 1.3). Zero-length flags mean all bits clear; octets
    /// after the first are reserved extensions and ignored.
    public var flags: ADFlags? {
        first(.flags).map { ADFlags(rawValue: $0.first ?? 0) }
    }

    /// Service UUIDs from every complete or incomplete 16-, 32- and 128-bit list, in
    /// order of appearance.
    public var serviceUUIDs: [BluetoothUUID] {
        uuids { $0.isServiceUUIDList }
    }

    /// True when at least one service UUID list is present and every one present is a
    /// complete list: the peer claims to have listed all its services.
    public var hasCompleteServiceList: Bool {
        var sawList = false
        var sawIncomplete = false
        forEachStructure { type, _ in
            if type.isServiceUUIDList {
                sawList = true
                sawIncomplete = !type.isCompleteServiceUUIDList
            }
            return !sawIncomplete
        }
        return sawList && !sawIncomplete
    }

    /// The complete local name, else the shortened one (Supplement Part A 1.2). Invalid
    /// UTF-8 is decoded with U+FFFD replacements.
    public var localName: String? {
        var complete: Range<Int>?
        var shortened: Range<Int>?
        forEachStructure { type, range in
            if type == .completeLocalName {
                complete = range
            } else if type == .shortenedLocalName, shortened == nil {
                shortened = range
            }
            return complete == nil
        }
        return (complete ?? shortened).map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// Whether ``localName`` is the complete name.
    public var isLocalNameComplete: Bool { firstRange(.completeLocalName) != nil }

    /// The TX Power Level in dBm (Supplement Part A 1.5); nil unless exactly one octet.
    public var txPowerLevel: Int8? {
        guard let data = first(.txPowerLevel), data.count == 1, let byte = data.first else { return nil }
        return Int8(bitPattern: byte)
    }

    /// Every Service Data structure (16-, 32- and 128-bit), in order; those shorter than
    /// their UUID are left out.
    public var serviceData: [ServiceData] {
        var found: [ServiceData] = []
        forEachStructure { type, range in
            guard type.isServiceData, let width = type.uuidWidth, range.count >= width else { return true }
            found.append(ServiceData(
                uuid: Self.uuid(bytes, at: range.lowerBound, width: width),
                data: Array(bytes[(range.lowerBound + width)..<range.upperBound])
            ))
            return true
        }
        return found
    }

    /// Every Manufacturer Specific Data structure, in order; those shorter than a company
    /// identifier are left out.
    public var manufacturerData: [ManufacturerData] {
        var found: [ManufacturerData] = []
        forEachManufacturerData { found.append($0); return true }
        return found
    }

    /// The first of ``manufacturerData``, without decoding the others.
    public var firstManufacturerData: ManufacturerData? {
        var found: ManufacturerData?
        forEachManufacturerData { found = $0; return false }
        return found
    }

    /// Each Manufacturer Specific Data structure long enough for a company identifier, in
    /// order, while `body` returns true.
    private func forEachManufacturerData(_ body: (ManufacturerData) -> Bool) {
        forEachStructure { type, range in
            guard type == .manufacturerSpecificData, range.count >= 2 else { return true }
            return body(ManufacturerData(
                companyID: UInt16(truncatingIfNeeded: Self.littleEndian(bytes, at: range.lowerBound, count: 2)),
                data: Array(bytes[(range.lowerBound + 2)..<range.upperBound])
            ))
        }
    }

    /// The Appearance (Supplement Part A 1.12); nil unless exactly two octets.
    public var appearance: Appearance? {
        guard let data = first(.appearance), data.count == 2 else { return nil }
        return Appearance(UInt16(data[data.startIndex]) | UInt16(data[data.startIndex + 1]) << 8)
    }

    /// UUIDs from every 16-, 32- and 128-bit Service Solicitation list (Supplement Part A
    /// 1.10), in order: the services the advertiser wants a central to offer (ANCS asks
    /// for its 128-bit UUID this way).
    public var solicitedServiceUUIDs: [BluetoothUUID] {
        uuids { $0.isSolicitationUUIDList }
    }

    /// Addresses from every Public Target Address structure (Supplement Part A 1.13).
    public var publicTargetAddresses: [BluetoothAddress] { addresses(.publicTargetAddress) }

    /// Addresses from every Random Target Address structure (Supplement Part A 1.14).
    public var randomTargetAddresses: [BluetoothAddress] { addresses(.randomTargetAddress) }

    /// The first Advertising Interval (2 octets) or Advertising Interval - long (3 or 4
    /// octets) structure (Supplement Part A 1.15, 1.26).
    public var advertisingInterval: AdvertisingInterval? {
        for structure in structures {
            let count = structure.data.count
            let fits = structure.type == .advertisingInterval ? count == 2
                : structure.type == .advertisingIntervalLong ? (count == 3 || count == 4) : false
            if fits { return AdvertisingInterval(units: UInt32(truncatingIfNeeded: Self.littleEndian(structure.data))) }
        }
        return nil
    }

    /// The URI (Supplement Part A 1.18) with its scheme code expanded ("https:" for
    /// U+0017); see ``URIScheme/expand(_:)`` for malformed data.
    public var uri: String? {
        first(.uri).flatMap(URIScheme.expand)
    }

    /// The LE Supported Features octets (Supplement Part A 1.19), least significant first;
    /// trailing zero octets may be omitted by the advertiser.
    public var leSupportedFeatures: [UInt8]? {
        first(.leSupportedFeatures).map(Array.init)
    }

    /// The LE Bluetooth Device Address (Supplement Part A 1.16): six address octets and
    /// one whose bit 0 says random (1) or public (0). Nil unless exactly seven octets.
    public var leBluetoothDeviceAddress: DeviceAddress? {
        guard let data = first(.leBluetoothDeviceAddress), data.count == 7 else { return nil }
        let address = BluetoothAddress(Self.littleEndian(data.prefix(6)))
        return DeviceAddress(address, type: data[data.startIndex + 6] & 1 == 1 ? .random : .public)
    }

    /// The Broadcast_Name (Supplement Part A 1.24) an Auracast source advertises.
    public var broadcastName: String? {
        first(.broadcastName).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The Peripheral Connection Interval Range (Supplement Part A 1.9) in 1.25 ms units;
    /// 0xFFFF in either bound means "no specific value". Nil unless exactly four octets.
    public var peripheralConnectionIntervalRange: (minimum: UInt16, maximum: UInt16)? {
        guard let data = first(.peripheralConnectionIntervalRange), data.count == 4 else { return nil }
        let value = Self.littleEndian(data)
        return (UInt16(truncatingIfNeeded: value), UInt16(truncatingIfNeeded: value >> 16))
    }

    // MARK: - Helpers

    private func uuids(_ include: (ADType) -> Bool) -> [BluetoothUUID] {
        // Counted first so the array is allocated once, not regrown per UUID.
        var total = 0
        forEachStructure { type, range in
            if include(type), let width = type.uuidWidth { total += range.count / width }
            return true
        }
        guard total > 0 else { return [] }
        var found: [BluetoothUUID] = []
        found.reserveCapacity(total)
        forEachStructure { type, range in
            guard include(type), let width = type.uuidWidth else { return true }
            var index = range.lowerBound
            // Whole UUIDs only: a trailing partial one is a malformation, not a UUID.
            while index + width <= range.upperBound {
                found.append(Self.uuid(bytes, at: index, width: width))
                index += width
            }
            return true
        }
        return found
    }

    private func addresses(_ type: ADType) -> [BluetoothAddress] {
        var found: [BluetoothAddress] = []
        for structure in structures where structure.type == type {
            var index = structure.data.startIndex
            while index + 6 <= structure.data.endIndex {
                found.append(BluetoothAddress(Self.littleEndian(structure.data[index..<(index + 6)])))
                index += 6
            }
        }
        return found
    }

    /// A UUID of `width` (2, 4 or 16) bytes at `index`, least significant first. Callers
    /// have checked that the bytes are there.
    static func uuid(_ data: [UInt8], at index: Int, width: Int) -> BluetoothUUID {
        switch width {
        case 2: BluetoothUUID(UInt16(truncatingIfNeeded: littleEndian(data, at: index, count: 2)))
        case 4: BluetoothUUID(UInt32(truncatingIfNeeded: littleEndian(data, at: index, count: 4)))
        default:
            BluetoothUUID(
                high: littleEndian(data, at: index + 8, count: 8),
                low: littleEndian(data, at: index, count: 8)
            )
        }
    }

    /// `count` (at most 8) bytes at `index` as an unsigned little-endian integer; reads
    /// the array directly so no slice is made.
    static func littleEndian(_ bytes: [UInt8], at index: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        var position = min(index + min(count, 8), bytes.count)
        while position > index {
            position -= 1
            value = value << 8 | UInt64(bytes[position])
        }
        return value
    }

    /// Up to eight bytes as an unsigned little-endian integer.
    static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        var index = min(bytes.endIndex, bytes.startIndex + 8)
        while index > bytes.startIndex {
            index -= 1
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }
}
