import BluetoothCore

// Subevents from extended scanning and advertising sets (Core Vol 4 Part E 7.7.65.17-.19).

/// LE Scan Timeout (subevent 0x11): a scan started with a duration has ended. No parameters.
public struct LEScanTimeout: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.scanTimeout

    public init() {}

    public init(decoding reader: inout ByteReader) throws(DecodeError) {}

    public func encode(into writer: inout ByteWriter) {}
}

/// LE Advertising Set Terminated (subevent 0x12): an advertising set stopped, because a
/// connection was made from it, its duration or event count ran out, or it failed.
public struct LEAdvertisingSetTerminated: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.advertisingSetTerminated

    public var status: HCIErrorCode
    public var advertisingHandle: UInt8
    /// The connection the set's advertising created; meaningful only when status is success.
    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    public var numCompletedExtendedAdvertisingEvents: UInt8

    public init(status: HCIErrorCode, advertisingHandle: UInt8, connectionHandle: UInt16, numCompletedExtendedAdvertisingEvents: UInt8) {
        self.status = status
        self.advertisingHandle = advertisingHandle
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.numCompletedExtendedAdvertisingEvents = numCompletedExtendedAdvertisingEvents
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = try reader.readErrorCode()
        advertisingHandle = try reader.readUInt8()
        connectionHandle = try reader.readMaskedConnectionHandle()
        numCompletedExtendedAdvertisingEvents = try reader.readUInt8()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(status)
        writer.write(advertisingHandle)
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(numCompletedExtendedAdvertisingEvents)
    }
}

/// LE Scan Request Received (subevent 0x13): a scanner asked one of our sets for its scan
/// response (only when the set enabled scan request notifications).
public struct LEScanRequestReceived: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.scanRequestReceived

    public var advertisingHandle: UInt8
    public var scannerAddressType: ReportedAddressType
    public var scannerAddress: BluetoothAddress

    public init(advertisingHandle: UInt8, scannerAddressType: ReportedAddressType, scannerAddress: BluetoothAddress) {
        self.advertisingHandle = advertisingHandle
        self.scannerAddressType = scannerAddressType
        self.scannerAddress = scannerAddress
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8()
        scannerAddressType = ReportedAddressType(rawValue: try reader.readUInt8())
        scannerAddress = try reader.readAddress()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(scannerAddressType.rawValue)
        writer.write(scannerAddress)
    }
}
