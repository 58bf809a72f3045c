import BluetoothCore

// Controller & Baseband commands (OGF 0x03, Core Vol 4 Part E 7.3) that an LE host uses.

/// Reset (7.3.2): returns the controller to its power-on state. Every session starts here.
public struct Reset: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.controllerAndBaseband, ocf: 0x0003)
    public static let name = "Reset"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (5, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Set Event Mask (7.3.1): which page-1 events the controller may send.
public struct SetEventMask: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.controllerAndBaseband, ocf: 0x0001)
    public static let name = "Set Event Mask"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (5, 6) }

    public let mask: UInt64

    public init(mask: UInt64) { self.mask = mask }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        mask = try reader.readUInt64()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(mask) }
}

/// Set Event Mask Page 2 (7.3.69): the second page of event mask bits.
public struct SetEventMaskPage2: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.controllerAndBaseband, ocf: 0x0063)
    public static let name = "Set Event Mask Page 2"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (22, 2) }

    public let mask: UInt64

    public init(mask: UInt64) { self.mask = mask }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        mask = try reader.readUInt64()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(mask) }
}

/// Write LE Host Support (7.3.79): tells a dual-mode controller that the host does LE.
///
/// The second octet was Simultaneous_LE_Host; since Core 5.1 it is unused and shall be
/// 0x00, so it is not a property and a non-zero value does not decode.
public struct WriteLEHostSupported: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.controllerAndBaseband, ocf: 0x006D)
    public static let name = "Write LE Host Support"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (24, 6) }

    public let leSupportedHost: Bool

    public init(leSupportedHost: Bool) { self.leSupportedHost = leSupportedHost }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        leSupportedHost = try reader.readBooleanParameter("LE_Supported_Host")
        let unused = try reader.readUInt8()
        guard unused == 0 else { throw .invalidValue(field: "Simultaneous_LE_Host", value: Int(unused)) }
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(leSupportedHost)
        writer.write(UInt8(0))
    }
}

/// Read Local Name (7.3.12): the controller's user-friendly name.
public struct ReadLocalName: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.controllerAndBaseband, ocf: 0x0014)
    public static let name = "Read Local Name"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (7, 1) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// The Local_Name field's length: always 248 octets, NUL-terminated when shorter.
        public static let length = 248

        /// All 248 octets as the controller sent them; ``name`` is the readable part.
        public let localName: [UInt8]

        /// Throws unless `localName` is exactly 248 octets.
        public init(localName: [UInt8]) throws(DecodeError) {
            try checkParameterLength(localName, is: Self.length)
            self.localName = localName
        }

        /// The name up to its first NUL, decoded as UTF-8 (invalid sequences repaired,
        /// because the name came from a controller we do not trust to be well-formed).
        public var name: String {
            let end = localName.firstIndex(of: 0) ?? localName.count
            return String(decoding: localName[..<end], as: UTF8.self)
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            localName = try reader.readFixedParameter(count: Self.length)
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: localName) }
    }
}

/// Read Transmit Power Level (7.3.35): the current or maximum TX power on a connection.
public struct ReadTransmitPowerLevel: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.controllerAndBaseband, ocf: 0x002D)
    public static let name = "Read Transmit Power Level"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (10, 2) }

    /// The Type parameter.
    public struct PowerLevelType: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let current = PowerLevelType(rawValue: 0x00)
        public static let maximum = PowerLevelType(rawValue: 0x01)
    }

    public let connectionHandle: UInt16
    public let type: PowerLevelType

    public init(connectionHandle: UInt16, type: PowerLevelType) {
        self.connectionHandle = connectionHandle
        self.type = type
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        type = PowerLevelType(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(type.rawValue)
    }

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let connectionHandle: UInt16
        /// dBm.
        public let txPowerLevel: Int8

        public init(connectionHandle: UInt16, txPowerLevel: Int8) {
            self.connectionHandle = connectionHandle
            self.txPowerLevel = txPowerLevel
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            connectionHandle = try reader.readUInt16()
            txPowerLevel = try reader.readPowerParameter()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(connectionHandle)
            writer.write(txPowerLevel)
        }
    }
}
