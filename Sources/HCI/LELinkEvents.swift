import BluetoothCore

// Subevents about an established LE connection's features, keys, packet sizes and PHY
// (Core Vol 4 Part E 7.7.65.4, .5, .7, .12).

/// LE Read Remote Features Complete (subevent 0x04): the peer's LE feature bits.
public struct LEReadRemoteFeaturesComplete: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.readRemoteFeaturesComplete

    public var status: HCIErrorCode
    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    /// LE_Features, the 8-octet bit mask of Core Vol 6 Part B 4.6, bit 0 of octet 0 as bit 0.
    public var leFeatures: UInt64

    public init(status: HCIErrorCode, connectionHandle: UInt16, leFeatures: UInt64) {
        self.status = status
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.leFeatures = leFeatures
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = try reader.readErrorCode()
        connectionHandle = try reader.readMaskedConnectionHandle()
        leFeatures = try reader.readUInt64()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(leFeatures)
    }
}

/// LE Long Term Key Request (subevent 0x05): the central started encryption and the
/// controller (as peripheral) asks the host for the key.
public struct LELongTermKeyRequest: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.longTermKeyRequest

    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    /// Random_Number (Rand): zero for LE Secure Connections keys.
    public var randomNumber: UInt64
    /// Encrypted_Diversifier (EDIV): zero for LE Secure Connections keys.
    public var encryptedDiversifier: UInt16

    public init(connectionHandle: UInt16, randomNumber: UInt64, encryptedDiversifier: UInt16) {
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readMaskedConnectionHandle()
        randomNumber = try reader.readUInt64()
        encryptedDiversifier = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(randomNumber)
        writer.write(encryptedDiversifier)
    }
}

/// LE Data Length Change (subevent 0x07): the largest link-layer payloads in each direction.
public struct LEDataLengthChange: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.dataLengthChange

    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    /// Octets of payload per packet, 27...251.
    public var maxTxOctets: UInt16
    /// Microseconds per packet on air.
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    public init(connectionHandle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readMaskedConnectionHandle()
        maxTxOctets = try reader.readUInt16()
        maxTxTime = try reader.readUInt16()
        maxRxOctets = try reader.readUInt16()
        maxRxTime = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(maxTxOctets)
        writer.write(maxTxTime)
        writer.write(maxRxOctets)
        writer.write(maxRxTime)
    }
}

/// LE PHY Update Complete (subevent 0x0C): the PHYs a connection now uses.
public struct LEPHYUpdateComplete: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.phyUpdateComplete

    public var status: HCIErrorCode
    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    public var txPHY: LEPHY
    public var rxPHY: LEPHY

    public init(status: HCIErrorCode, connectionHandle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
        self.status = status
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.txPHY = txPHY
        self.rxPHY = rxPHY
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = try reader.readErrorCode()
        connectionHandle = try reader.readMaskedConnectionHandle()
        txPHY = LEPHY(rawValue: try reader.readUInt8())
        rxPHY = LEPHY(rawValue: try reader.readUInt8())
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(txPHY.rawValue)
        writer.write(rxPHY.rawValue)
    }
}
