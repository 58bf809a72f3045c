import BluetoothCore

// LE Controller commands (OGF 0x08, Core Vol 4 Part E 7.8) that describe the controller's
// LE capabilities and buffers: read once at power-on to size flow control and choose
// between legacy and extended procedures.

/// LE Set Event Mask (7.8.1): which LE Meta event subevents the controller may send.
public struct LESetEventMask: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0001)
    public static let name = "LE Set Event Mask"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 0) }

    public let mask: UInt64

    public init(mask: UInt64) { self.mask = mask }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        mask = try reader.readUInt64()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(mask) }
}

/// LE Read Buffer Size [v1] (7.8.2). A length of zero means LE shares the BR/EDR buffers
/// of Read Buffer Size.
public struct LEReadBufferSizeV1: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0002)
    public static let name = "LE Read Buffer Size [v1]"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 1) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// LE_ACL_Data_Packet_Length.
        public let leACLDataPacketLength: UInt16
        /// Total_Num_LE_ACL_Data_Packets.
        public let totalLEACLDataPackets: UInt8

        public init(leACLDataPacketLength: UInt16, totalLEACLDataPackets: UInt8) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalLEACLDataPackets = totalLEACLDataPackets
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            leACLDataPacketLength = try reader.readUInt16()
            totalLEACLDataPackets = try reader.readUInt8()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(leACLDataPacketLength)
            writer.write(totalLEACLDataPackets)
        }
    }
}

/// LE Read Buffer Size [v2] (7.8.2): adds the isochronous buffers.
public struct LEReadBufferSizeV2: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0060)
    public static let name = "LE Read Buffer Size [v2]"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (41, 5) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// LE_ACL_Data_Packet_Length.
        public let leACLDataPacketLength: UInt16
        /// Total_Num_LE_ACL_Data_Packets.
        public let totalLEACLDataPackets: UInt8
        /// ISO_Data_Packet_Length.
        public let isoDataPacketLength: UInt16
        /// Total_Num_ISO_Data_Packets.
        public let totalISODataPackets: UInt8

        public init(leACLDataPacketLength: UInt16, totalLEACLDataPackets: UInt8, isoDataPacketLength: UInt16, totalISODataPackets: UInt8) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalLEACLDataPackets = totalLEACLDataPackets
            self.isoDataPacketLength = isoDataPacketLength
            self.totalISODataPackets = totalISODataPackets
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            leACLDataPacketLength = try reader.readUInt16()
            totalLEACLDataPackets = try reader.readUInt8()
            isoDataPacketLength = try reader.readUInt16()
            totalISODataPackets = try reader.readUInt8()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(leACLDataPacketLength)
            writer.write(totalLEACLDataPackets)
            writer.write(isoDataPacketLength)
            writer.write(totalISODataPackets)
        }
    }
}

/// LE Read Local Supported Features (7.8.3; "... Page 0" since Core 6.0).
public struct LEReadLocalSupportedFeatures: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0003)
    public static let name = "LE Read Local Supported Features"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (25, 2) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let features: LEFeatures

        public init(features: LEFeatures) { self.features = features }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            features = LEFeatures(rawValue: try reader.readUInt64())
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(features.rawValue) }
    }
}

/// LE Read Supported States (7.8.27): which combinations of link-layer states and roles
/// the controller can be in at once.
public struct LEReadSupportedStates: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x001C)
    public static let name = "LE Read Supported States"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (28, 3) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// LE_States, a bitmask defined by the table in 7.8.27.
        public let states: UInt64

        public init(states: UInt64) { self.states = states }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            states = try reader.readUInt64()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(states) }
    }
}

/// LE Read Maximum Data Length (7.8.46): the largest link-layer payloads and times the
/// controller supports, the ceiling for LE Set Data Length.
public struct LEReadMaximumDataLength: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x002F)
    public static let name = "LE Read Maximum Data Length"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (35, 3) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// Octets.
        public let supportedMaxTxOctets: UInt16
        /// Microseconds.
        public let supportedMaxTxTime: UInt16
        public let supportedMaxRxOctets: UInt16
        public let supportedMaxRxTime: UInt16

        public init(supportedMaxTxOctets: UInt16, supportedMaxTxTime: UInt16, supportedMaxRxOctets: UInt16, supportedMaxRxTime: UInt16) {
            self.supportedMaxTxOctets = supportedMaxTxOctets
            self.supportedMaxTxTime = supportedMaxTxTime
            self.supportedMaxRxOctets = supportedMaxRxOctets
            self.supportedMaxRxTime = supportedMaxRxTime
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            supportedMaxTxOctets = try reader.readUInt16()
            supportedMaxTxTime = try reader.readUInt16()
            supportedMaxRxOctets = try reader.readUInt16()
            supportedMaxRxTime = try reader.readUInt16()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(supportedMaxTxOctets)
            writer.write(supportedMaxTxTime)
            writer.write(supportedMaxRxOctets)
            writer.write(supportedMaxRxTime)
        }
    }
}

/// LE Read Suggested Default Data Length (7.8.34): what new connections start with.
public struct LEReadSuggestedDefaultDataLength: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0023)
    public static let name = "LE Read Suggested Default Data Length"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (33, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let suggestedMaxTxOctets: UInt16
        public let suggestedMaxTxTime: UInt16

        public init(suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
            self.suggestedMaxTxOctets = suggestedMaxTxOctets
            self.suggestedMaxTxTime = suggestedMaxTxTime
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            suggestedMaxTxOctets = try reader.readUInt16()
            suggestedMaxTxTime = try reader.readUInt16()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(suggestedMaxTxOctets)
            writer.write(suggestedMaxTxTime)
        }
    }
}

/// LE Write Suggested Default Data Length (7.8.35).
public struct LEWriteSuggestedDefaultDataLength: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0024)
    public static let name = "LE Write Suggested Default Data Length"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (34, 0) }

    public let suggestedMaxTxOctets: UInt16
    public let suggestedMaxTxTime: UInt16

    public init(suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
        self.suggestedMaxTxOctets = suggestedMaxTxOctets
        self.suggestedMaxTxTime = suggestedMaxTxTime
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        suggestedMaxTxOctets = try reader.readUInt16()
        suggestedMaxTxTime = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(suggestedMaxTxOctets)
        writer.write(suggestedMaxTxTime)
    }
}

/// LE Read Transmit Power (7.8.74): the range of TX power the controller can use.
public struct LEReadTransmitPower: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x004B)
    public static let name = "LE Read Transmit Power"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (38, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// dBm.
        public let minTxPower: Int8
        /// dBm.
        public let maxTxPower: Int8

        public init(minTxPower: Int8, maxTxPower: Int8) {
            self.minTxPower = minTxPower
            self.maxTxPower = maxTxPower
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            minTxPower = try reader.readPowerParameter()
            maxTxPower = try reader.readPowerParameter()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(minTxPower)
            writer.write(maxTxPower)
        }
    }
}
