import BluetoothCore

// Informational parameters (OGF 0x04, Core Vol 4 Part E 7.4): what the controller is and
// what it can do, read once during power-on.

/// Read Local Version Information (7.4.1).
public struct ReadLocalVersionInformation: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.informational, ocf: 0x0001)
    public static let name = "Read Local Version Information"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (14, 3) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// HCI_Version; ``HCIVersion`` names it.
        public let hciVersion: UInt8
        /// HCI_Subversion (HCI_Revision before Core 5.2): manufacturer-defined.
        public let hciSubversion: UInt16
        /// LMP_Version (LL version for LE-only controllers); same numbering as HCI_Version.
        public let lmpVersion: UInt8
        /// Company_Identifier; ``CompanyIdentifiers`` names it.
        public let manufacturer: UInt16
        public let lmpSubversion: UInt16

        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, manufacturer: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.manufacturer = manufacturer
            self.lmpSubversion = lmpSubversion
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            hciVersion = try reader.readUInt8()
            hciSubversion = try reader.readUInt16()
            lmpVersion = try reader.readUInt8()
            manufacturer = try reader.readUInt16()
            lmpSubversion = try reader.readUInt16()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(hciVersion)
            writer.write(hciSubversion)
            writer.write(lmpVersion)
            writer.write(manufacturer)
            writer.write(lmpSubversion)
        }
    }
}

/// Read Local Supported Commands (7.4.2). It has no Supported_Commands bit of its own: a
/// host must be able to send it to learn about every other command.
public struct ReadLocalSupportedCommands: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.informational, ocf: 0x0002)
    public static let name = "Read Local Supported Commands"

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let commands: SupportedCommands

        public init(commands: SupportedCommands) { self.commands = commands }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            commands = try SupportedCommands(decoding: &reader)
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { commands.encode(into: &writer) }
    }
}

/// Read Local Supported Features (7.4.3): LMP features page 0.
public struct ReadLocalSupportedFeatures: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.informational, ocf: 0x0003)
    public static let name = "Read Local Supported Features"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (14, 5) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let features: LMPFeatures

        public init(features: LMPFeatures) { self.features = features }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            features = LMPFeatures(rawValue: try reader.readUInt64())
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(features.rawValue) }
    }
}

/// Read Buffer Size (7.4.5): the controller's BR/EDR ACL and synchronous buffers. LE-only
/// controllers may report zero here and answer LE Read Buffer Size instead.
public struct ReadBufferSize: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.informational, ocf: 0x0005)
    public static let name = "Read Buffer Size"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (14, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// ACL_Data_Packet_Length.
        public let aclDataPacketLength: UInt16
        /// Synchronous_Data_Packet_Length.
        public let synchronousDataPacketLength: UInt8
        /// Total_Num_ACL_Data_Packets.
        public let totalACLDataPackets: UInt16
        /// Total_Num_Synchronous_Data_Packets.
        public let totalSynchronousDataPackets: UInt16

        public init(aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8, totalACLDataPackets: UInt16, totalSynchronousDataPackets: UInt16) {
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalACLDataPackets = totalACLDataPackets
            self.totalSynchronousDataPackets = totalSynchronousDataPackets
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            aclDataPacketLength = try reader.readUInt16()
            synchronousDataPacketLength = try reader.readUInt8()
            totalACLDataPackets = try reader.readUInt16()
            totalSynchronousDataPackets = try reader.readUInt16()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(aclDataPacketLength)
            writer.write(synchronousDataPacketLength)
            writer.write(totalACLDataPackets)
            writer.write(totalSynchronousDataPackets)
        }
    }
}

/// Read BD_ADDR (7.4.6): the controller's public device address.
public struct ReadBDADDR: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.informational, ocf: 0x0009)
    public static let name = "Read BD_ADDR"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (15, 1) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// BD_ADDR; all zeros from controllers that have no public address.
        public let address: BluetoothAddress

        public init(address: BluetoothAddress) { self.address = address }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            address = try reader.readAddress()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(address) }
    }
}

/// Read RSSI (7.5.4, a Status Parameters command, OGF 0x05).
public struct ReadRSSI: ConnectionHandleCommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.statusParameters, ocf: 0x0005)
    public static let name = "Read RSSI"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (15, 5) }

    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let connectionHandle: UInt16
        /// dBm; 127 means the controller cannot read it.
        public let rssi: Int8

        public init(connectionHandle: UInt16, rssi: Int8) {
            self.connectionHandle = connectionHandle
            self.rssi = rssi
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            connectionHandle = try reader.readUInt16()
            rssi = try reader.readPowerParameter()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(connectionHandle)
            writer.write(rssi)
        }
    }
}

/// Read Encryption Key Size (7.5.7, a Status Parameters command, OGF 0x05): the key size
/// the link is encrypted with, checked against the minimum after an Encryption Change v1
/// (which, unlike v2, does not carry it).
public struct ReadEncryptionKeySize: ConnectionHandleCommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.statusParameters, ocf: 0x0008)
    public static let name = "Read Encryption Key Size"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (20, 4) }

    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let connectionHandle: UInt16
        /// Octets, 1 ... 16.
        public let keySize: UInt8

        public init(connectionHandle: UInt16, keySize: UInt8) {
            self.connectionHandle = connectionHandle
            self.keySize = keySize
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            connectionHandle = try reader.readUInt16()
            keySize = try reader.readUInt8()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(connectionHandle)
            writer.write(keySize)
        }
    }
}
