import BluetoothCore

// Choosing the PHY of LE connections (Core Vol 4 Part E 7.8.47 - 7.8.49).

/// LE Read PHY (7.8.47): the PHYs a connection currently uses.
public struct LEReadPHY: ConnectionHandleCommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0030)
    public static let name = "LE Read PHY"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (35, 4) }

    public let connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let connectionHandle: UInt16
        public let txPHY: LEPHY
        public let rxPHY: LEPHY

        public init(connectionHandle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
            self.connectionHandle = connectionHandle
            self.txPHY = txPHY
            self.rxPHY = rxPHY
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            connectionHandle = try reader.readUInt16()
            txPHY = LEPHY(rawValue: try reader.readUInt8())
            rxPHY = LEPHY(rawValue: try reader.readUInt8())
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) {
            writer.write(connectionHandle)
            writer.write(txPHY.rawValue)
            writer.write(rxPHY.rawValue)
        }
    }
}

/// LE Set Default PHY (7.8.48): the PHYs the host prefers for every new connection.
public struct LESetDefaultPHY: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0031)
    public static let name = "LE Set Default PHY"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (35, 5) }

    public let allPHYs: LEAllPHYsPreference
    public let txPHYs: LEPHYMask
    public let rxPHYs: LEPHYMask

    public init(allPHYs: LEAllPHYsPreference = [], txPHYs: LEPHYMask, rxPHYs: LEPHYMask) {
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        allPHYs = LEAllPHYsPreference(rawValue: try reader.readUInt8())
        txPHYs = LEPHYMask(rawValue: try reader.readUInt8())
        rxPHYs = LEPHYMask(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(allPHYs.rawValue)
        writer.write(txPHYs.rawValue)
        writer.write(rxPHYs.rawValue)
    }
}

/// LE Set PHY (7.8.49): asks the link layer to change one connection's PHYs; finishes with
/// LE PHY Update Complete.
public struct LESetPHY: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0032)
    public static let name = "LE Set PHY"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (35, 6) }
    public static var completesWithStatus: Bool { true }

    public let connectionHandle: UInt16
    public let allPHYs: LEAllPHYsPreference
    public let txPHYs: LEPHYMask
    public let rxPHYs: LEPHYMask
    public let phyOptions: LECodedPHYOptions

    public init(
        connectionHandle: UInt16,
        allPHYs: LEAllPHYsPreference = [],
        txPHYs: LEPHYMask,
        rxPHYs: LEPHYMask,
        phyOptions: LECodedPHYOptions = .noPreference
    ) {
        self.connectionHandle = connectionHandle
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
        self.phyOptions = phyOptions
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16()
        allPHYs = LEAllPHYsPreference(rawValue: try reader.readUInt8())
        txPHYs = LEPHYMask(rawValue: try reader.readUInt8())
        rxPHYs = LEPHYMask(rawValue: try reader.readUInt8())
        phyOptions = LECodedPHYOptions(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(connectionHandle)
        writer.write(allPHYs.rawValue)
        writer.write(txPHYs.rawValue)
        writer.write(rxPHYs.rawValue)
        writer.write(phyOptions.rawValue)
    }
}
