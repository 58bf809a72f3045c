import BluetoothCore

// Legacy advertising (Core Vol 4 Part E 7.8.4 - 7.8.9): one advertising set, 31 octets of
// data. Controllers without LE Extended Advertising only have these; a controller that has
// both refuses to mix them on one power cycle.

/// Advertising_Type of LE Set Advertising Parameters: the legacy PDU the advertiser sends.
public struct AdvertisingType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// ADV_IND.
    public static let connectableUndirected = AdvertisingType(rawValue: 0x00)
    /// ADV_DIRECT_IND, high duty cycle.
    public static let connectableHighDutyCycleDirected = AdvertisingType(rawValue: 0x01)
    /// ADV_SCAN_IND.
    public static let scannableUndirected = AdvertisingType(rawValue: 0x02)
    /// ADV_NONCONN_IND.
    public static let nonConnectableUndirected = AdvertisingType(rawValue: 0x03)
    /// ADV_DIRECT_IND, low duty cycle.
    public static let connectableLowDutyCycleDirected = AdvertisingType(rawValue: 0x04)

    public var description: String {
        switch rawValue {
        case 0x00: "ADV_IND"
        case 0x01: "ADV_DIRECT_IND (high duty cycle)"
        case 0x02: "ADV_SCAN_IND"
        case 0x03: "ADV_NONCONN_IND"
        case 0x04: "ADV_DIRECT_IND (low duty cycle)"
        default: "reserved advertising type \(reservedValueHex(rawValue))"
        }
    }
}

/// LE Set Random Address (7.8.4): the random address used by legacy advertising, scanning
/// and initiating when the own address type is random.
public struct LESetRandomAddress: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0005)
    public static let name = "LE Set Random Address"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 4) }

    public let randomAddress: BluetoothAddress

    public init(randomAddress: BluetoothAddress) { self.randomAddress = randomAddress }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        randomAddress = try reader.readAddress()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(randomAddress) }
}

/// LE Set Advertising Parameters (7.8.5).
public struct LESetAdvertisingParameters: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0006)
    public static let name = "LE Set Advertising Parameters"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 5) }

    /// Units of 0.625 ms.
    public let advertisingIntervalMin: UInt16
    /// Units of 0.625 ms.
    public let advertisingIntervalMax: UInt16
    public let advertisingType: AdvertisingType
    public let ownAddressType: AddressType
    /// Only for directed advertising; otherwise ignored by the controller.
    public let peerAddressType: AddressType
    public let peerAddress: BluetoothAddress
    public let advertisingChannelMap: AdvertisingChannelMap
    public let advertisingFilterPolicy: AdvertisingFilterPolicy

    public init(
        advertisingIntervalMin: UInt16,
        advertisingIntervalMax: UInt16,
        advertisingType: AdvertisingType,
        ownAddressType: AddressType,
        peerAddressType: AddressType = .public,
        peerAddress: BluetoothAddress = .zero,
        advertisingChannelMap: AdvertisingChannelMap = .all,
        advertisingFilterPolicy: AdvertisingFilterPolicy = .acceptAll
    ) {
        self.advertisingIntervalMin = advertisingIntervalMin
        self.advertisingIntervalMax = advertisingIntervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.advertisingChannelMap = advertisingChannelMap
        self.advertisingFilterPolicy = advertisingFilterPolicy
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingIntervalMin = try reader.readUInt16()
        advertisingIntervalMax = try reader.readUInt16()
        advertisingType = AdvertisingType(rawValue: try reader.readUInt8())
        ownAddressType = try reader.readAddressTypeParameter("Own_Address_Type")
        peerAddressType = try reader.readAddressTypeParameter("Peer_Address_Type")
        peerAddress = try reader.readAddress()
        advertisingChannelMap = AdvertisingChannelMap(rawValue: try reader.readUInt8())
        advertisingFilterPolicy = AdvertisingFilterPolicy(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingIntervalMin)
        writer.write(advertisingIntervalMax)
        writer.write(advertisingType.rawValue)
        writer.writeAddressTypeParameter(ownAddressType)
        writer.writeAddressTypeParameter(peerAddressType)
        writer.write(peerAddress)
        writer.write(advertisingChannelMap.rawValue)
        writer.write(advertisingFilterPolicy.rawValue)
    }
}

/// LE Read Advertising Physical Channel Tx Power (7.8.6): the power legacy advertising
/// uses, for the TX Power Level AD type.
public struct LEReadAdvertisingPhysicalChannelTxPower: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0007)
    public static let name = "LE Read Advertising Physical Channel Tx Power"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 6) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// dBm.
        public let txPowerLevel: Int8

        public init(txPowerLevel: Int8) { self.txPowerLevel = txPowerLevel }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            txPowerLevel = try reader.readPowerParameter()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(txPowerLevel) }
    }
}

/// The shared layout of LE Set Advertising Data and LE Set Scan Response Data: a length
/// octet, then always 31 octets, the significant part first and zeros after it.
enum LegacyAdvertisingPayload {
    static let capacity = 31

    static func read(_ reader: inout ByteReader, lengthField: String, dataField: String) throws(DecodeError) -> [UInt8] {
        let length = Int(try reader.readUInt8())
        guard length <= capacity else { throw .invalidValue(field: lengthField, value: length) }
        let all = try reader.readBytes(capacity)
        // Only zero padding re-encodes to the same bytes; anything else in the padding would
        // be silently dropped, so it is refused rather than normalised.
        if let stray = all[length...].first(where: { $0 != 0 }) {
            throw .invalidValue(field: dataField + " padding", value: Int(stray))
        }
        try reader.expectEnd()
        return Array(all[..<length])
    }

    static func write(_ data: [UInt8], into writer: inout ByteWriter) {
        writer.write(UInt8(data.count))
        writer.write(contentsOf: data)
        writer.write(contentsOf: repeatElement(UInt8(0), count: capacity - data.count))
    }
}

/// LE Set Advertising Data (7.8.7): at most 31 octets of AD structures.
public struct LESetAdvertisingData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0008)
    public static let name = "LE Set Advertising Data"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 7) }

    /// The significant part of Advertising_Data; the encoder pads it to 31 octets.
    public let advertisingData: [UInt8]

    /// Throws `invalidValue` when the data is longer than 31 octets: the command has no room
    /// for more, and truncating AD structures would corrupt them.
    public init(advertisingData: [UInt8]) throws(DecodeError) {
        try checkParameterLength(advertisingData, atMost: LegacyAdvertisingPayload.capacity, field: "Advertising_Data_Length")
        self.advertisingData = advertisingData
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingData = try LegacyAdvertisingPayload.read(&reader, lengthField: "Advertising_Data_Length", dataField: "Advertising_Data")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        LegacyAdvertisingPayload.write(advertisingData, into: &writer)
    }
}

/// LE Set Scan Response Data (7.8.8): at most 31 octets sent in answer to scan requests.
public struct LESetScanResponseData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0009)
    public static let name = "LE Set Scan Response Data"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 0) }

    /// The significant part of Scan_Response_Data; the encoder pads it to 31 octets.
    public let scanResponseData: [UInt8]

    /// Throws `invalidValue` when the data is longer than 31 octets.
    public init(scanResponseData: [UInt8]) throws(DecodeError) {
        try checkParameterLength(scanResponseData, atMost: LegacyAdvertisingPayload.capacity, field: "Scan_Response_Data_Length")
        self.scanResponseData = scanResponseData
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        scanResponseData = try LegacyAdvertisingPayload.read(&reader, lengthField: "Scan_Response_Data_Length", dataField: "Scan_Response_Data")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        LegacyAdvertisingPayload.write(scanResponseData, into: &writer)
    }
}

/// LE Set Advertising Enable (7.8.9).
public struct LESetAdvertisingEnable: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x000A)
    public static let name = "LE Set Advertising Enable"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 1) }

    public let advertisingEnable: Bool

    public init(advertisingEnable: Bool) { self.advertisingEnable = advertisingEnable }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingEnable = try reader.readBooleanParameter("Advertising_Enable")
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(advertisingEnable) }
}
