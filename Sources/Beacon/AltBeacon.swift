import BluetoothCore

/// An AltBeacon advertisement (the AltBeacon specification, Radius Networks): Manufacturer
/// Specific Data from any company whose payload is the beacon code 0xBEAC, a 20-octet
/// beacon ID (conventionally a 16-octet organisation UUID, then two 2-octet values), the
/// reference RSSI at 1 m (int8 dBm) and one octet the manufacturer reserves.
public struct AltBeacon: Sendable, Hashable, CustomStringConvertible {
    /// The two octets that open the payload, in transmission order.
    public static let beaconCode: [UInt8] = [0xBE, 0xAC]
    public static let beaconIDLength = 20
    /// Code 2 + ID 20 + reference RSSI 1 + reserved 1.
    static let payloadLength = 24

    /// The advertiser's company, which the format lets be anyone's.
    public var companyID: UInt16
    public var beaconID: [UInt8]
    /// RSSI at 1 m in dBm.
    public var referenceRSSI: Int8
    public var manufacturerReserved: UInt8

    /// Checked: the beacon ID must be 20 octets and the reference RSSI -127...20 dBm.
    public init(companyID: UInt16, beaconID: [UInt8], referenceRSSI: Int, manufacturerReserved: UInt8 = 0) throws(BeaconEncodingError) {
        guard beaconID.count == Self.beaconIDLength else {
            throw .wrongIdentifierLength(field: "AltBeacon beacon ID", expected: Self.beaconIDLength, actual: beaconID.count)
        }
        self.companyID = companyID
        self.beaconID = beaconID
        self.referenceRSSI = try checkedPower(referenceRSSI, field: "reference RSSI")
        self.manufacturerReserved = manufacturerReserved
    }

    private init(uncheckedCompanyID companyID: UInt16, beaconID: [UInt8], referenceRSSI: Int8, manufacturerReserved: UInt8) {
        self.companyID = companyID
        self.beaconID = beaconID
        self.referenceRSSI = referenceRSSI
        self.manufacturerReserved = manufacturerReserved
    }

    public var manufacturerPayload: [UInt8] {
        Self.beaconCode + beaconID + [UInt8(bitPattern: referenceRSSI), manufacturerReserved]
    }

    /// Flags 0x06 and the manufacturer data (AD length 0x1B), as the specification lays out.
    public func advertisingData() throws(BeaconEncodingError) -> AdvertisingData {
        guard beaconID.count == Self.beaconIDLength else {
            throw .wrongIdentifierLength(field: "AltBeacon beacon ID", expected: Self.beaconIDLength, actual: beaconID.count)
        }
        _ = try checkedPower(Int(referenceRSSI), field: "reference RSSI")
        let payload = manufacturerPayload
        let company = companyID
        return try buildAdvertisingData {
            $0.flags(.generalDiscoverableLEOnly)
            $0.manufacturerData(companyID: company, payload)
        }
    }

    /// Decodes one manufacturer data structure: a different opening code is not this
    /// format, the code with the wrong length is malformed.
    public static func decode(_ manufacturer: ManufacturerData) -> BeaconDecoding<AltBeacon> {
        let data = manufacturer.data
        guard data.count >= 2, data[0] == beaconCode[0], data[1] == beaconCode[1] else { return .notThisFormat }
        guard data.count == payloadLength else {
            return .malformed(.wrongLength(frame: "AltBeacon", expected: payloadLength...payloadLength, actual: data.count))
        }
        return .frame(AltBeacon(
            uncheckedCompanyID: manufacturer.companyID,
            beaconID: Array(data[2..<22]),
            referenceRSSI: Int8(bitPattern: data[22]),
            manufacturerReserved: data[23]
        ))
    }

    /// The first AltBeacon among the manufacturer data structures.
    public static func decode(_ data: AdvertisingData) -> BeaconDecoding<AltBeacon> {
        var result = BeaconDecoding<AltBeacon>.notThisFormat
        for manufacturer in data.manufacturerData {
            let decoded = decode(manufacturer)
            if case .frame = decoded { return decoded }
            if case .malformed = decoded { result = decoded }
        }
        return result
    }

    public init?(_ data: AdvertisingData) {
        guard let frame = Self.decode(data).frame else { return nil }
        self = frame
    }

    public var description: String {
        "AltBeacon \(Hex.string(beaconID)) reference RSSI \(referenceRSSI) dBm (company 0x\(Hex.string(BigEndian.bytes(companyID))))"
    }
}
