import BluetoothCore

// Subevents that create or re-time an LE connection (Core Vol 4 Part E 7.7.65.1, .3, .10,
// .20). Timing fields stay in the specification's units so they round-trip exactly; the
// millisecond properties are for people (the unit conversions live with
// LEConnectionParameters, which the commands use).

/// LE Connection Complete (subevent 0x01): a connection exists, or creating one failed.
public struct LEConnectionComplete: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.connectionComplete

    public var status: HCIErrorCode
    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    public var role: ConnectionRole
    /// Public (0x00) or random (0x01) here.
    public var peerAddressType: ReportedAddressType
    public var peerAddress: BluetoothAddress
    /// Units of 1.25 ms.
    public var connectionInterval: UInt16
    /// Connection events the peripheral may skip (Peripheral_Latency).
    public var peripheralLatency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    /// Central_Clock_Accuracy: 0x00 = 500 ppm ... 0x07 = 20 ppm; kept raw.
    public var centralClockAccuracy: UInt8

    public init(
        status: HCIErrorCode, connectionHandle: UInt16, role: ConnectionRole,
        peerAddressType: ReportedAddressType, peerAddress: BluetoothAddress,
        connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16,
        centralClockAccuracy: UInt8
    ) {
        self.status = status
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    public var connectionIntervalMilliseconds: Double { HCI.connectionIntervalMilliseconds(connectionInterval) }
    public var supervisionTimeoutMilliseconds: Int { HCI.supervisionTimeoutMilliseconds(supervisionTimeout) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = try reader.readErrorCode()
        connectionHandle = try reader.readMaskedConnectionHandle()
        role = ConnectionRole(rawValue: try reader.readUInt8())
        peerAddressType = ReportedAddressType(rawValue: try reader.readUInt8())
        peerAddress = try reader.readAddress()
        connectionInterval = try reader.readUInt16()
        peripheralLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        centralClockAccuracy = try reader.readUInt8()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(role.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(peerAddress)
        writer.write(connectionInterval)
        writer.write(peripheralLatency)
        writer.write(supervisionTimeout)
        writer.write(centralClockAccuracy)
    }
}

/// LE Enhanced Connection Complete, v1 (subevent 0x0A) and v2 (0x29).
///
/// One type for both: v2 only appends the advertising set and periodic sync the connection
/// came from, so ``version`` carries those two fields and alone decides the subevent code.
public struct LEEnhancedConnectionComplete: LEMetaSubevent {
    /// The v1 code; ``subeventCode-swift.property`` gives the code of a particular value.
    public static let subeventCode = LEMetaEvent.Code.enhancedConnectionCompleteV1

    public enum Version: Sendable, Equatable {
        case v1
        /// Advertising_Handle (0xFF: not from an advertising set) and Sync_Handle (0xFFFF:
        /// not from periodic advertising with responses).
        case v2(advertisingHandle: UInt8, syncHandle: UInt16)
    }

    public var version: Version
    public var status: HCIErrorCode
    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    public var role: ConnectionRole
    /// 0x00...0x03: identity types mean the controller resolved the peer's address.
    public var peerAddressType: ReportedAddressType
    public var peerAddress: BluetoothAddress
    /// The local RPA used for the connection; all zeros when none was used.
    public var localResolvablePrivateAddress: BluetoothAddress
    /// The peer's RPA when the controller resolved it; all zeros otherwise.
    public var peerResolvablePrivateAddress: BluetoothAddress
    /// Units of 1.25 ms.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(
        version: Version = .v1, status: HCIErrorCode, connectionHandle: UInt16, role: ConnectionRole,
        peerAddressType: ReportedAddressType, peerAddress: BluetoothAddress,
        localResolvablePrivateAddress: BluetoothAddress, peerResolvablePrivateAddress: BluetoothAddress,
        connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16,
        centralClockAccuracy: UInt8
    ) {
        self.version = version
        self.status = status
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    /// 0x0A for v1, 0x29 for v2.
    public var subeventCode: UInt8 {
        if case .v2 = version { return LEMetaEvent.Code.enhancedConnectionCompleteV2 }
        return LEMetaEvent.Code.enhancedConnectionCompleteV1
    }

    public var advertisingHandle: UInt8? {
        if case .v2(let handle, _) = version { return handle }
        return nil
    }

    public var syncHandle: UInt16? {
        if case .v2(_, let handle) = version { return handle }
        return nil
    }

    public var connectionIntervalMilliseconds: Double { HCI.connectionIntervalMilliseconds(connectionInterval) }
    public var supervisionTimeoutMilliseconds: Int { HCI.supervisionTimeoutMilliseconds(supervisionTimeout) }

    static let version1Size = 30

    /// Decodes either version, telling them apart by length (30 or 33 bytes) because the
    /// protocol's initializer does not see the subevent code. ``LEMetaEvent`` uses the code.
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        try self.init(decoding: &reader, isVersion2: reader.remaining > Self.version1Size)
    }

    init(decoding reader: inout ByteReader, isVersion2: Bool) throws(DecodeError) {
        status = try reader.readErrorCode()
        connectionHandle = try reader.readMaskedConnectionHandle()
        role = ConnectionRole(rawValue: try reader.readUInt8())
        peerAddressType = ReportedAddressType(rawValue: try reader.readUInt8())
        peerAddress = try reader.readAddress()
        localResolvablePrivateAddress = try reader.readAddress()
        peerResolvablePrivateAddress = try reader.readAddress()
        connectionInterval = try reader.readUInt16()
        peripheralLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        centralClockAccuracy = try reader.readUInt8()
        if isVersion2 {
            version = .v2(advertisingHandle: try reader.readUInt8(), syncHandle: try reader.readUInt16())
        } else {
            version = .v1
        }
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(role.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(peerAddress)
        writer.write(localResolvablePrivateAddress)
        writer.write(peerResolvablePrivateAddress)
        writer.write(connectionInterval)
        writer.write(peripheralLatency)
        writer.write(supervisionTimeout)
        writer.write(centralClockAccuracy)
        if case .v2(let advertisingHandle, let syncHandle) = version {
            writer.write(advertisingHandle)
            writer.write(syncHandle)
        }
    }
}

/// LE Connection Update Complete (subevent 0x03): new connection timing is in effect.
public struct LEConnectionUpdateComplete: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.connectionUpdateComplete

    public var status: HCIErrorCode
    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    /// Units of 1.25 ms.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(
        status: HCIErrorCode, connectionHandle: UInt16, connectionInterval: UInt16,
        peripheralLatency: UInt16, supervisionTimeout: UInt16
    ) {
        self.status = status
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    public var connectionIntervalMilliseconds: Double { HCI.connectionIntervalMilliseconds(connectionInterval) }
    public var supervisionTimeoutMilliseconds: Int { HCI.supervisionTimeoutMilliseconds(supervisionTimeout) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = try reader.readErrorCode()
        connectionHandle = try reader.readMaskedConnectionHandle()
        connectionInterval = try reader.readUInt16()
        peripheralLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(connectionInterval)
        writer.write(peripheralLatency)
        writer.write(supervisionTimeout)
    }
}

/// LE Channel Selection Algorithm (subevent 0x14): which hopping algorithm a new connection uses.
public struct LEChannelSelectionAlgorithm: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.channelSelectionAlgorithm

    /// 12 bits; higher bits are dropped.
    public var connectionHandle: UInt16
    /// 0x00 = algorithm #1, 0x01 = algorithm #2; kept raw.
    public var channelSelectionAlgorithm: UInt8

    public init(connectionHandle: UInt16, channelSelectionAlgorithm: UInt8) {
        self.connectionHandle = connectionHandle & connectionHandleMask
        self.channelSelectionAlgorithm = channelSelectionAlgorithm
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readMaskedConnectionHandle()
        channelSelectionAlgorithm = try reader.readUInt8()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeMaskedConnectionHandle(connectionHandle)
        writer.write(channelSelectionAlgorithm)
    }
}
