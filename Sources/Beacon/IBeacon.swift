import BluetoothCore

/// An iBeacon advertisement, Apple's published layout: Manufacturer Specific Data for
/// company 0x004C whose payload is type 0x02, length 0x15 (21), the proximity UUID (16
/// octets, in printed order), major and minor (big-endian) and the measured power: the RSSI
/// in dBm a receiver sees at 1 m, which ranging uses as its calibration point.
public struct IBeacon: Sendable, Hashable, CustomStringConvertible {
    public static let appleCompanyID: UInt16 = 0x004C
    /// The first octet of Apple's manufacturer payload that says "iBeacon".
    public static let beaconType: UInt8 = 0x02
    /// The second octet: how many octets follow (UUID 16 + major 2 + minor 2 + power 1).
    public static let beaconLength: UInt8 = 0x15

    public var proximityUUID: BluetoothUUID
    public var major: UInt16
    public var minor: UInt16
    /// RSSI at 1 m in dBm.
    public var measuredPower: Int8

    public init(proximityUUID: BluetoothUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// From user input, checked: the UUID must be written out in full (a 16-bit alias is
    /// refused because iBeacon UUIDs are organisation identifiers, never SIG numbers),
    /// major and minor 0...65535, measured power -127...20 dBm.
    public init(proximityUUID text: String, major: Int, minor: Int, measuredPower: Int) throws(BeaconEncodingError) {
        guard text.filter({ $0 != "-" }).count == 32, let uuid = BluetoothUUID(text) else {
            throw .invalidProximityUUID(text)
        }
        guard (0...0xFFFF).contains(major) else { throw .valueOutOfRange(field: "major", value: major, allowed: 0...0xFFFF) }
        guard (0...0xFFFF).contains(minor) else { throw .valueOutOfRange(field: "minor", value: minor, allowed: 0...0xFFFF) }
        self.init(
            proximityUUID: uuid,
            major: UInt16(major),
            minor: UInt16(minor),
            measuredPower: try checkedPower(measuredPower, field: "measured power")
        )
    }

    /// The 23 octets after the company identifier.
    public var manufacturerPayload: [UInt8] {
        [Self.beaconType, Self.beaconLength] + BigEndian.bytes(proximityUUID)
            + BigEndian.bytes(major) + BigEndian.bytes(minor) + [UInt8(bitPattern: measuredPower)]
    }

    /// Flags 0x06 (LE General Discoverable, BR/EDR not supported) and the manufacturer
    /// data: 30 octets, the layout every receiver expects. Advertise it non-connectable.
    public func advertisingData() throws(BeaconEncodingError) -> AdvertisingData {
        _ = try checkedPower(Int(measuredPower), field: "measured power")
        let payload = manufacturerPayload
        return try buildAdvertisingData {
            $0.flags(.generalDiscoverableLEOnly)
            $0.manufacturerData(companyID: Self.appleCompanyID, payload)
        }
    }

    /// Decodes a manufacturer payload (the octets after company 0x004C). Apple uses its
    /// company identifier for many messages (Continuity, AirDrop, Find My), so any type
    /// octet other than 0x02 is "not this format"; type 0x02 with a broken length is
    /// malformed.
    public static func decode(manufacturerPayload data: [UInt8]) -> BeaconDecoding<IBeacon> {
        guard data.first == beaconType else { return .notThisFormat }
        let expected = 2 + Int(beaconLength)
        guard data.count == expected else {
            return .malformed(.wrongLength(frame: "iBeacon", expected: expected...expected, actual: data.count))
        }
        guard data[1] == beaconLength else {
            return .malformed(.wrongLength(frame: "iBeacon length octet", expected: 21...21, actual: Int(data[1])))
        }
        let slice = data[...]
        return .frame(IBeacon(
            proximityUUID: BigEndian.uuid(slice, at: 2),
            major: BigEndian.uint16(slice, at: 18),
            minor: BigEndian.uint16(slice, at: 20),
            measuredPower: Int8(bitPattern: data[22])
        ))
    }

    /// The first iBeacon among the Apple manufacturer data structures; a malformed one is
    /// reported only when no well-formed one follows.
    public static func decode(_ data: AdvertisingData) -> BeaconDecoding<IBeacon> {
        var result = BeaconDecoding<IBeacon>.notThisFormat
        for manufacturer in data.manufacturerData where manufacturer.companyID == appleCompanyID {
            let decoded = decode(manufacturerPayload: manufacturer.data)
            if case .frame = decoded { return decoded }
            if case .malformed = decoded { result = decoded }
        }
        return result
    }

    /// The iBeacon in `data`, or nil when there is none or it is malformed.
    public init?(_ data: AdvertisingData) {
        guard let frame = Self.decode(data).frame else { return nil }
        self = frame
    }

    public var description: String {
        "iBeacon \(proximityUUID.uuidString128) major \(major) minor \(minor) measured power \(measuredPower) dBm"
    }
}
