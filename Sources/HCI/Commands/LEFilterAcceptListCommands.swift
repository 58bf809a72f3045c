import BluetoothCore

// The Filter Accept List (Core Vol 4 Part E 7.8.14 - 7.8.17; "White List" before Core 5.3):
// the devices scanning, advertising and initiating may be restricted to.

/// Address_Type of the Filter Accept List commands: public, random, or the pseudo-entry
/// that matches advertising without an address (anonymous advertising).
public struct FilterAcceptListAddressType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let `public` = FilterAcceptListAddressType(rawValue: 0x00)
    public static let random = FilterAcceptListAddressType(rawValue: 0x01)
    /// The address is ignored; the entry matches anonymous advertisements.
    public static let anonymousAdvertisements = FilterAcceptListAddressType(rawValue: 0xFF)
}

/// LE Read Filter Accept List Size (7.8.14).
public struct LEReadFilterAcceptListSize: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x000F)
    public static let name = "LE Read Filter Accept List Size"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 6) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let filterAcceptListSize: UInt8

        public init(filterAcceptListSize: UInt8) { self.filterAcceptListSize = filterAcceptListSize }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            filterAcceptListSize = try reader.readUInt8()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(filterAcceptListSize) }
    }
}

/// LE Clear Filter Accept List (7.8.15).
public struct LEClearFilterAcceptList: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0010)
    public static let name = "LE Clear Filter Accept List"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Add Device To Filter Accept List (7.8.16).
public struct LEAddDeviceToFilterAcceptList: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0011)
    public static let name = "LE Add Device To Filter Accept List"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (27, 0) }

    public let addressType: FilterAcceptListAddressType
    public let address: BluetoothAddress

    public init(addressType: FilterAcceptListAddressType, address: BluetoothAddress) {
        self.addressType = addressType
        self.address = address
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        addressType = FilterAcceptListAddressType(rawValue: try reader.readUInt8())
        address = try reader.readAddress()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(addressType.rawValue)
        writer.write(address)
    }
}

/// LE Remove Device From Filter Accept List (7.8.17).
public struct LERemoveDeviceFromFilterAcceptList: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0012)
    public static let name = "LE Remove Device From Filter Accept List"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (27, 1) }

    public let addressType: FilterAcceptListAddressType
    public let address: BluetoothAddress

    public init(addressType: FilterAcceptListAddressType, address: BluetoothAddress) {
        self.addressType = addressType
        self.address = address
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        addressType = FilterAcceptListAddressType(rawValue: try reader.readUInt8())
        address = try reader.readAddress()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(addressType.rawValue)
        writer.write(address)
    }
}
