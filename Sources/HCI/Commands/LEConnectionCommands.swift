import BluetoothCore

// Creating and maintaining LE connections (Core Vol 4 Part E 7.8.12 - 7.8.33, 7.8.66).
// The creating and updating commands finish with LE Meta events, so the controller
// answers them with Command Status.

/// LE Create Connection (7.8.12); finishes with LE (Enhanced) Connection Complete.
public struct LECreateConnection: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x000D)
    public static let name = "LE Create Connection"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 4) }
    public static var completesWithStatus: Bool { true }

    /// Units of 0.625 ms.
    public let leScanInterval: UInt16
    /// Units of 0.625 ms.
    public let leScanWindow: UInt16
    public let initiatorFilterPolicy: InitiatorFilterPolicy
    public let peerAddressType: AddressType
    public let peerAddress: BluetoothAddress
    public let ownAddressType: AddressType
    public let connectionParameters: LEConnectionParameters

    public init(
        leScanInterval: UInt16,
        leScanWindow: UInt16,
        initiatorFilterPolicy: InitiatorFilterPolicy = .peerAddress,
        peerAddressType: AddressType,
        peerAddress: BluetoothAddress,
        ownAddressType: AddressType,
        connectionParameters: LEConnectionParameters
    ) {
        self.leScanInterval = leScanInterval
        self.leScanWindow = leScanWindow
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connectionParameters = connectionParameters
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        leScanInterval = try reader.readUInt16()
        leScanWindow = try reader.readUInt16()
        initiatorFilterPolicy = InitiatorFilterPolicy(rawValue: try reader.readUInt8())
        peerAddressType = try reader.readAddressTypeParameter("Peer_Address_Type")
        peerAddress = try reader.readAddress()
        ownAddressType = try reader.readAddressTypeParameter("Own_Address_Type")
        connectionParameters = try LEConnectionParameters(decoding: &reader)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(leScanInterval)
        writer.write(leScanWindow)
        writer.write(initiatorFilterPolicy.rawValue)
        writer.writeAddressTypeParameter(peerAddressType)
        writer.write(peerAddress)
        writer.writeAddressTypeParameter(ownAddressType)
        connectionParameters.encode(into: &writer)
    }
}

/// LE Create Connection Cancel (7.8.13). Completes with Command Complete; the pending
/// LE Create Connection then ends with Unknown Connection Identifier.
public struct LECreateConnectionCancel: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x000E)
    public static let name = "LE Create Connection Cancel"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 5) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Extended Create Connection [v1] (7.8.66): connect over any of the initiating PHYs.
/// The wire carries one 16-octet entry per bit set in Initiating_PHYs, in bit order.
public struct LEExtendedCreateConnection: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0043)
    public static let name = "LE Extended Create Connection"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (37, 7) }
    public static var completesWithStatus: Bool { true }

    /// The per-PHY arrays' entries for one PHY: where to scan for the peer, and the
    /// connection parameters to use if the connection is made on this PHY.
    public struct PHYParameters: Hashable, Sendable {
        /// Units of 0.625 ms.
        public let scanInterval: UInt16
        /// Units of 0.625 ms.
        public let scanWindow: UInt16
        public let connectionParameters: LEConnectionParameters

        public init(scanInterval: UInt16, scanWindow: UInt16, connectionParameters: LEConnectionParameters) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connectionParameters = connectionParameters
        }

        init(decoding reader: inout ByteReader) throws(DecodeError) {
            scanInterval = try reader.readUInt16()
            scanWindow = try reader.readUInt16()
            connectionParameters = try LEConnectionParameters(decoding: &reader)
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(scanInterval)
            writer.write(scanWindow)
            connectionParameters.encode(into: &writer)
        }
    }

    public let initiatorFilterPolicy: InitiatorFilterPolicy
    public let ownAddressType: AddressType
    public let peerAddressType: AddressType
    public let peerAddress: BluetoothAddress
    public let initiatingPHYs: LEPHYMask
    /// One entry per bit set in ``initiatingPHYs``, lowest bit first.
    public let phyParameters: [PHYParameters]

    /// Throws `lengthMismatch` unless there is one entry per bit set in `initiatingPHYs`.
    public init(
        initiatorFilterPolicy: InitiatorFilterPolicy = .peerAddress,
        ownAddressType: AddressType,
        peerAddressType: AddressType,
        peerAddress: BluetoothAddress,
        initiatingPHYs: LEPHYMask,
        phyParameters: [PHYParameters]
    ) throws(DecodeError) {
        try checkPHYEntries(phyParameters.count, mask: initiatingPHYs)
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.initiatingPHYs = initiatingPHYs
        self.phyParameters = phyParameters
    }

    /// Initiates on the given PHYs; the mask follows from which arguments are given, so this
    /// cannot fail.
    public init(
        initiatorFilterPolicy: InitiatorFilterPolicy = .peerAddress,
        ownAddressType: AddressType,
        peerAddressType: AddressType,
        peerAddress: BluetoothAddress,
        le1M: PHYParameters?,
        le2M: PHYParameters? = nil,
        leCoded: PHYParameters? = nil
    ) {
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        (initiatingPHYs, phyParameters) = phyEntries([(.le1M, le1M), (.le2M, le2M), (.leCoded, leCoded)])
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        initiatorFilterPolicy = InitiatorFilterPolicy(rawValue: try reader.readUInt8())
        ownAddressType = try reader.readAddressTypeParameter("Own_Address_Type")
        peerAddressType = try reader.readAddressTypeParameter("Peer_Address_Type")
        peerAddress = try reader.readAddress()
        initiatingPHYs = LEPHYMask(rawValue: try reader.readUInt8())
        phyParameters = try reader.readPHYEntries(initiatingPHYs, PHYParameters.init(decoding:))
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(initiatorFilterPolicy.rawValue)
        writer.writeAddressTypeParameter(ownAddressType)
        writer.writeAddressTypeParameter(peerAddressType)
        writer.write(peerAddress)
        writer.write(initiatingPHYs.rawValue)
        for entry in phyParameters { entry.encode(into: &writer) }
    }
}

/// LE Connection Update (7.8.18); finishes with LE Connection Update Complete.
public struct LEConnectionUpdate: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0013)
    public static let name = "LE Connection Update"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (27, 2) }
    public static var completesWithStatus: Bool { true }

    public let connectionHandle: UInt16
    public let connectionParameters: LEConnectionParameters

    public init(connectionHandle: UInt16, connectionParameters: LEConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.connectionParameters = connectionParameters
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        connectionParameters = try LEConnectionParameters(decoding: &reader)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        connectionParameters.encode(into: &writer)
    }
}

/// LE Read Remote Features (7.8.21; "... Page 0" since Core 6.0); finishes with LE Read
/// Remote Features Complete.
public struct LEReadRemoteFeatures: ConnectionHandleCommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0016)
    public static let name = "LE Read Remote Features"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (27, 5) }
    public static var completesWithStatus: Bool { true }

    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }
}

/// LE Set Data Length (7.8.33): asks the link layer to negotiate larger PDUs.
public struct LESetDataLength: HCICommand, Equatable {
    public typealias ReturnParameters = ConnectionHandleReturnParameters

    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0022)
    public static let name = "LE Set Data Length"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (33, 6) }

    public let connectionHandle: UInt16
    /// Octets.
    public let txOctets: UInt16
    /// Microseconds.
    public let txTime: UInt16

    public init(connectionHandle: UInt16, txOctets: UInt16, txTime: UInt16) {
        self.connectionHandle = connectionHandle
        self.txOctets = txOctets
        self.txTime = txTime
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        txOctets = try reader.readUInt16()
        txTime = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(txOctets)
        writer.write(txTime)
    }
}

/// LE Remote Connection Parameter Request Reply (7.8.31): accepts the peer's connection
/// parameter request, possibly with adjusted values.
public struct LERemoteConnectionParameterRequestReply: HCICommand, Equatable {
    public typealias ReturnParameters = ConnectionHandleReturnParameters

    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0020)
    public static let name = "LE Remote Connection Parameter Request Reply"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (33, 4) }

    public let connectionHandle: UInt16
    public let connectionParameters: LEConnectionParameters

    public init(connectionHandle: UInt16, connectionParameters: LEConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.connectionParameters = connectionParameters
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        connectionParameters = try LEConnectionParameters(decoding: &reader)
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        connectionParameters.encode(into: &writer)
    }
}

/// LE Remote Connection Parameter Request Negative Reply (7.8.32): rejects the peer's
/// request with an HCI error code (usually 0x3B Unacceptable Connection Parameters).
public struct LERemoteConnectionParameterRequestNegativeReply: HCICommand, Equatable {
    public typealias ReturnParameters = ConnectionHandleReturnParameters

    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0021)
    public static let name = "LE Remote Connection Parameter Request Negative Reply"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (33, 5) }

    public static let unacceptableConnectionParameters: UInt8 = 0x3B

    public let connectionHandle: UInt16
    public let reason: UInt8

    public init(connectionHandle: UInt16, reason: UInt8 = LERemoteConnectionParameterRequestNegativeReply.unacceptableConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        reason = try reader.readUInt8()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(reason)
    }
}
