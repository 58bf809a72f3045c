import BluetoothCore

// Parameter value sets of the extended advertising commands (Core Vol 4 Part E 7.8.53 -
// 7.8.56).

/// Advertising_Event_Properties: what kind of advertising a set does. Reserved bits are
/// kept as they came.
public struct AdvertisingEventProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectable = AdvertisingEventProperties(rawValue: 1 << 0)
    public static let scannable = AdvertisingEventProperties(rawValue: 1 << 1)
    public static let directed = AdvertisingEventProperties(rawValue: 1 << 2)
    public static let highDutyCycleDirectedConnectable = AdvertisingEventProperties(rawValue: 1 << 3)
    /// Send legacy PDUs from an extended advertising set (the other bits must then name
    /// one of the legacy PDU types).
    public static let useLegacyPDUs = AdvertisingEventProperties(rawValue: 1 << 4)
    /// Anonymous advertising: omit AdvA from all PDUs.
    public static let omitAdvertiserAddress = AdvertisingEventProperties(rawValue: 1 << 5)
    public static let includeTxPower = AdvertisingEventProperties(rawValue: 1 << 6)
}

/// Operation of LE Set Extended Advertising Data / Scan Response Data: which fragment of
/// the set's data this command carries.
public struct AdvertisingDataOperation: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let intermediateFragment = AdvertisingDataOperation(rawValue: 0x00)
    public static let firstFragment = AdvertisingDataOperation(rawValue: 0x01)
    public static let lastFragment = AdvertisingDataOperation(rawValue: 0x02)
    public static let completeData = AdvertisingDataOperation(rawValue: 0x03)
    /// Keep the data but change the Advertising DID (advertising data only).
    public static let unchangedData = AdvertisingDataOperation(rawValue: 0x04)
}

/// Fragment_Preference: whether the controller may split the data across PDUs.
public struct AdvertisingFragmentPreference: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let mayFragment = AdvertisingFragmentPreference(rawValue: 0x00)
    public static let shouldNotFragment = AdvertisingFragmentPreference(rawValue: 0x01)
}

/// The shared layout of LE Set Extended Advertising Data and LE Set Extended Scan Response
/// Data: handle, operation, fragment preference, length, data.
enum ExtendedAdvertisingPayload {
    /// A command's parameters are at most 255 octets; four go to the header fields.
    static let capacity = 251

    static func check(_ data: [UInt8], field: String) throws(DecodeError) {
        try checkParameterLength(data, atMost: capacity, field: field)
    }

    static func readData(_ reader: inout ByteReader, lengthField: String) throws(DecodeError) -> [UInt8] {
        let length = Int(try reader.readUInt8())
        guard length <= capacity else { throw .invalidValue(field: lengthField, value: length) }
        let data = try reader.readBytes(length)
        try reader.expectEnd()
        return data
    }

    /// The length octet and the data; ``check(_:field:)`` has kept it within one octet.
    static func writeData(_ data: [UInt8], into writer: inout ByteWriter) {
        writer.write(UInt8(data.count))
        writer.write(contentsOf: data)
    }
}
