import BluetoothCore

// LL Privacy (Core Vol 4 Part E 7.8.38 - 7.8.45, 7.8.77): the resolving list of peer
// identities and IRKs, with which the controller generates and resolves resolvable private
// addresses itself.

/// Privacy_Mode of LE Set Privacy Mode.
public struct PrivacyMode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Accept only the peer's resolvable private addresses (the default).
    public static let network = PrivacyMode(rawValue: 0x00)
    /// Also accept the peer's identity address, for peers that do not use privacy.
    public static let device = PrivacyMode(rawValue: 0x01)
}

/// LE Add Device To Resolving List (7.8.38). IRKs are held as HCI carries them, least
/// significant octet first.
public struct LEAddDeviceToResolvingList: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0027)
    public static let name = "LE Add Device To Resolving List"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (34, 3) }

    public let peerIdentityAddressType: AddressType
    public let peerIdentityAddress: BluetoothAddress
    /// 16 octets.
    public let peerIRK: [UInt8]
    /// 16 octets.
    public let localIRK: [UInt8]

    /// Throws `lengthMismatch` unless both IRKs are 16 octets.
    public init(peerIdentityAddressType: AddressType, peerIdentityAddress: BluetoothAddress, peerIRK: [UInt8], localIRK: [UInt8]) throws(DecodeError) {
        try checkParameterLength(peerIRK, is: leKeyLength)
        try checkParameterLength(localIRK, is: leKeyLength)
        self.peerIdentityAddressType = peerIdentityAddressType
        self.peerIdentityAddress = peerIdentityAddress
        self.peerIRK = peerIRK
        self.localIRK = localIRK
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        peerIdentityAddressType = try reader.readAddressTypeParameter("Peer_Identity_Address_Type")
        peerIdentityAddress = try reader.readAddress()
        peerIRK = try reader.readFixedParameter(count: leKeyLength)
        localIRK = try reader.readFixedParameter(count: leKeyLength)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeAddressTypeParameter(peerIdentityAddressType)
        writer.write(peerIdentityAddress)
        writer.write(contentsOf: peerIRK)
        writer.write(contentsOf: localIRK)
    }
}

/// LE Remove Device From Resolving List (7.8.39).
public struct LERemoveDeviceFromResolvingList: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0028)
    public static let name = "LE Remove Device From Resolving List"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (34, 4) }

    public let peerIdentityAddressType: AddressType
    public let peerIdentityAddress: BluetoothAddress

    public init(peerIdentityAddressType: AddressType, peerIdentityAddress: BluetoothAddress) {
        self.peerIdentityAddressType = peerIdentityAddressType
        self.peerIdentityAddress = peerIdentityAddress
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        peerIdentityAddressType = try reader.readAddressTypeParameter("Peer_Identity_Address_Type")
        peerIdentityAddress = try reader.readAddress()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeAddressTypeParameter(peerIdentityAddressType)
        writer.write(peerIdentityAddress)
    }
}

/// LE Clear Resolving List (7.8.40).
public struct LEClearResolvingList: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0029)
    public static let name = "LE Clear Resolving List"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (34, 5) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read Resolving List Size (7.8.41).
public struct LEReadResolvingListSize: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x002A)
    public static let name = "LE Read Resolving List Size"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (34, 6) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let resolvingListSize: UInt8

        public init(resolvingListSize: UInt8) { self.resolvingListSize = resolvingListSize }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            resolvingListSize = try reader.readUInt8()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(resolvingListSize) }
    }
}

/// LE Set Address Resolution Enable (7.8.44).
public struct LESetAddressResolutionEnable: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x002D)
    public static let name = "LE Set Address Resolution Enable"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (35, 1) }

    public let addressResolutionEnable: Bool

    public init(addressResolutionEnable: Bool) { self.addressResolutionEnable = addressResolutionEnable }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        addressResolutionEnable = try reader.readBooleanParameter("Address_Resolution_Enable")
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(addressResolutionEnable) }
}

/// LE Set Resolvable Private Address Timeout (7.8.45): how often the controller makes a
/// new RPA.
public struct LESetResolvablePrivateAddressTimeout: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x002E)
    public static let name = "LE Set Resolvable Private Address Timeout"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (35, 2) }

    /// Seconds (default 900).
    public let rpaTimeout: UInt16

    public init(rpaTimeout: UInt16) { self.rpaTimeout = rpaTimeout }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        rpaTimeout = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(rpaTimeout) }
}

/// LE Set Privacy Mode (7.8.77).
public struct LESetPrivacyMode: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x004E)
    public static let name = "LE Set Privacy Mode"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (39, 2) }

    public let peerIdentityAddressType: AddressType
    public let peerIdentityAddress: BluetoothAddress
    public let privacyMode: PrivacyMode

    public init(peerIdentityAddressType: AddressType, peerIdentityAddress: BluetoothAddress, privacyMode: PrivacyMode) {
        self.peerIdentityAddressType = peerIdentityAddressType
        self.peerIdentityAddress = peerIdentityAddress
        self.privacyMode = privacyMode
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        peerIdentityAddressType = try reader.readAddressTypeParameter("Peer_Identity_Address_Type")
        peerIdentityAddress = try reader.readAddress()
        privacyMode = PrivacyMode(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeAddressTypeParameter(peerIdentityAddressType)
        writer.write(peerIdentityAddress)
        writer.write(privacyMode.rawValue)
    }
}
