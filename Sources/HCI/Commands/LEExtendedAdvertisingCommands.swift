import BluetoothCore

// Extended advertising (Core Vol 4 Part E 7.8.52 - 7.8.60): several advertising sets, each
// with its own parameters, address and up to 1650 octets of data in fragments.

/// LE Set Advertising Set Random Address (7.8.52).
public struct LESetAdvertisingSetRandomAddress: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0035)
    public static let name = "LE Set Advertising Set Random Address"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 1) }

    public let advertisingHandle: UInt8
    public let randomAddress: BluetoothAddress

    public init(advertisingHandle: UInt8, randomAddress: BluetoothAddress) {
        self.advertisingHandle = advertisingHandle
        self.randomAddress = randomAddress
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8()
        randomAddress = try reader.readAddress()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(randomAddress)
    }
}

/// LE Set Extended Advertising Parameters [v1] (7.8.53). The controller answers with the
/// TX power it actually selected.
public struct LESetExtendedAdvertisingParameters: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0036)
    public static let name = "LE Set Extended Advertising Parameters"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 2) }

    /// The largest value of the three-octet interval fields.
    public static let maximumInterval: UInt32 = 0xFF_FFFF
    /// Advertising_TX_Power value meaning "the host has no preference".
    public static let noTxPowerPreference: Int8 = 127

    public let advertisingHandle: UInt8
    public let advertisingEventProperties: AdvertisingEventProperties
    /// Units of 0.625 ms, three octets on the wire.
    public let primaryAdvertisingIntervalMin: UInt32
    /// Units of 0.625 ms, three octets on the wire.
    public let primaryAdvertisingIntervalMax: UInt32
    public let primaryAdvertisingChannelMap: AdvertisingChannelMap
    public let ownAddressType: AddressType
    public let peerAddressType: AddressType
    public let peerAddress: BluetoothAddress
    public let advertisingFilterPolicy: AdvertisingFilterPolicy
    /// dBm, or ``noTxPowerPreference``.
    public let advertisingTxPower: Int8
    public let primaryAdvertisingPHY: LEPHY
    public let secondaryAdvertisingMaxSkip: UInt8
    public let secondaryAdvertisingPHY: LEPHY
    public let advertisingSID: UInt8
    public let scanRequestNotificationEnable: Bool

    /// Throws `invalidValue` when an interval does not fit the three-octet field.
    public init(
        advertisingHandle: UInt8,
        advertisingEventProperties: AdvertisingEventProperties,
        primaryAdvertisingIntervalMin: UInt32,
        primaryAdvertisingIntervalMax: UInt32,
        primaryAdvertisingChannelMap: AdvertisingChannelMap = .all,
        ownAddressType: AddressType,
        peerAddressType: AddressType = .public,
        peerAddress: BluetoothAddress = .zero,
        advertisingFilterPolicy: AdvertisingFilterPolicy = .acceptAll,
        advertisingTxPower: Int8 = LESetExtendedAdvertisingParameters.noTxPowerPreference,
        primaryAdvertisingPHY: LEPHY = .le1M,
        secondaryAdvertisingMaxSkip: UInt8 = 0,
        secondaryAdvertisingPHY: LEPHY = .le1M,
        advertisingSID: UInt8 = 0,
        scanRequestNotificationEnable: Bool = false
    ) throws(DecodeError) {
        guard primaryAdvertisingIntervalMin <= Self.maximumInterval else {
            throw .invalidValue(field: "Primary_Advertising_Interval_Min", value: Int(primaryAdvertisingIntervalMin))
        }
        guard primaryAdvertisingIntervalMax <= Self.maximumInterval else {
            throw .invalidValue(field: "Primary_Advertising_Interval_Max", value: Int(primaryAdvertisingIntervalMax))
        }
        self.advertisingHandle = advertisingHandle
        self.advertisingEventProperties = advertisingEventProperties
        self.primaryAdvertisingIntervalMin = primaryAdvertisingIntervalMin
        self.primaryAdvertisingIntervalMax = primaryAdvertisingIntervalMax
        self.primaryAdvertisingChannelMap = primaryAdvertisingChannelMap
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.advertisingFilterPolicy = advertisingFilterPolicy
        self.advertisingTxPower = advertisingTxPower
        self.primaryAdvertisingPHY = primaryAdvertisingPHY
        self.secondaryAdvertisingMaxSkip = secondaryAdvertisingMaxSkip
        self.secondaryAdvertisingPHY = secondaryAdvertisingPHY
        self.advertisingSID = advertisingSID
        self.scanRequestNotificationEnable = scanRequestNotificationEnable
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8()
        advertisingEventProperties = AdvertisingEventProperties(rawValue: try reader.readUInt16())
        primaryAdvertisingIntervalMin = try reader.readUInt24()
        primaryAdvertisingIntervalMax = try reader.readUInt24()
        primaryAdvertisingChannelMap = AdvertisingChannelMap(rawValue: try reader.readUInt8())
        ownAddressType = try reader.readAddressTypeParameter("Own_Address_Type")
        peerAddressType = try reader.readAddressTypeParameter("Peer_Address_Type")
        peerAddress = try reader.readAddress()
        advertisingFilterPolicy = AdvertisingFilterPolicy(rawValue: try reader.readUInt8())
        advertisingTxPower = try reader.readPowerParameter()
        primaryAdvertisingPHY = LEPHY(rawValue: try reader.readUInt8())
        secondaryAdvertisingMaxSkip = try reader.readUInt8()
        secondaryAdvertisingPHY = LEPHY(rawValue: try reader.readUInt8())
        advertisingSID = try reader.readUInt8()
        scanRequestNotificationEnable = try reader.readBooleanParameter("Scan_Request_Notification_Enable")
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(advertisingEventProperties.rawValue)
        writer.writeUInt24(primaryAdvertisingIntervalMin)
        writer.writeUInt24(primaryAdvertisingIntervalMax)
        writer.write(primaryAdvertisingChannelMap.rawValue)
        writer.writeAddressTypeParameter(ownAddressType)
        writer.writeAddressTypeParameter(peerAddressType)
        writer.write(peerAddress)
        writer.write(advertisingFilterPolicy.rawValue)
        writer.write(advertisingTxPower)
        writer.write(primaryAdvertisingPHY.rawValue)
        writer.write(secondaryAdvertisingMaxSkip)
        writer.write(secondaryAdvertisingPHY.rawValue)
        writer.write(advertisingSID)
        writer.write(scanRequestNotificationEnable)
    }

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// dBm.
        public let selectedTxPower: Int8

        public init(selectedTxPower: Int8) { self.selectedTxPower = selectedTxPower }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            selectedTxPower = try reader.readPowerParameter()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(selectedTxPower) }
    }
}

/// LE Set Extended Advertising Data (7.8.54): one fragment (at most 251 octets) of a set's
/// advertising data.
public struct LESetExtendedAdvertisingData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0037)
    public static let name = "LE Set Extended Advertising Data"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 3) }

    public let advertisingHandle: UInt8
    public let operation: AdvertisingDataOperation
    public let fragmentPreference: AdvertisingFragmentPreference
    public let advertisingData: [UInt8]

    /// Throws `invalidValue` when the fragment is longer than 251 octets; split longer data
    /// into fragments with ``AdvertisingDataOperation``.
    public init(
        advertisingHandle: UInt8,
        operation: AdvertisingDataOperation = .completeData,
        fragmentPreference: AdvertisingFragmentPreference = .mayFragment,
        advertisingData: [UInt8]
    ) throws(DecodeError) {
        try ExtendedAdvertisingPayload.check(advertisingData, field: "Advertising_Data_Length")
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.advertisingData = advertisingData
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8()
        operation = AdvertisingDataOperation(rawValue: try reader.readUInt8())
        fragmentPreference = AdvertisingFragmentPreference(rawValue: try reader.readUInt8())
        advertisingData = try ExtendedAdvertisingPayload.readData(&reader, lengthField: "Advertising_Data_Length")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(operation.rawValue)
        writer.write(fragmentPreference.rawValue)
        ExtendedAdvertisingPayload.writeData(advertisingData, into: &writer)
    }
}

/// LE Set Extended Scan Response Data (7.8.55): one fragment of a set's scan response data.
public struct LESetExtendedScanResponseData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0038)
    public static let name = "LE Set Extended Scan Response Data"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 4) }

    public let advertisingHandle: UInt8
    public let operation: AdvertisingDataOperation
    public let fragmentPreference: AdvertisingFragmentPreference
    public let scanResponseData: [UInt8]

    /// Throws `invalidValue` when the fragment is longer than 251 octets.
    public init(
        advertisingHandle: UInt8,
        operation: AdvertisingDataOperation = .completeData,
        fragmentPreference: AdvertisingFragmentPreference = .mayFragment,
        scanResponseData: [UInt8]
    ) throws(DecodeError) {
        try ExtendedAdvertisingPayload.check(scanResponseData, field: "Scan_Response_Data_Length")
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.scanResponseData = scanResponseData
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8()
        operation = AdvertisingDataOperation(rawValue: try reader.readUInt8())
        fragmentPreference = AdvertisingFragmentPreference(rawValue: try reader.readUInt8())
        scanResponseData = try ExtendedAdvertisingPayload.readData(&reader, lengthField: "Scan_Response_Data_Length")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(operation.rawValue)
        writer.write(fragmentPreference.rawValue)
        ExtendedAdvertisingPayload.writeData(scanResponseData, into: &writer)
    }
}

/// LE Set Extended Advertising Enable (7.8.56): starts or stops several sets at once.
/// Disabling with no sets stops every set.
public struct LESetExtendedAdvertisingEnable: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0039)
    public static let name = "LE Set Extended Advertising Enable"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 5) }

    /// One entry of the per-set arrays, which the wire interleaves per set.
    public struct AdvertisingSet: Hashable, Sendable {
        public let advertisingHandle: UInt8
        /// Units of 10 ms; 0 advertises until disabled.
        public let duration: UInt16
        /// 0 means no limit.
        public let maxExtendedAdvertisingEvents: UInt8

        public init(advertisingHandle: UInt8, duration: UInt16 = 0, maxExtendedAdvertisingEvents: UInt8 = 0) {
            self.advertisingHandle = advertisingHandle
            self.duration = duration
            self.maxExtendedAdvertisingEvents = maxExtendedAdvertisingEvents
        }

        static let size = 4

        init(decoding reader: inout ByteReader) throws(DecodeError) {
            advertisingHandle = try reader.readUInt8()
            duration = try reader.readUInt16()
            maxExtendedAdvertisingEvents = try reader.readUInt8()
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(advertisingHandle)
            writer.write(duration)
            writer.write(maxExtendedAdvertisingEvents)
        }
    }

    public let enable: Bool
    public let sets: [AdvertisingSet]

    /// Throws `invalidValue` for more than 255 sets, which Num_Sets cannot count (the
    /// specification allows at most 63; the controller enforces that).
    public init(enable: Bool, sets: [AdvertisingSet]) throws(DecodeError) {
        guard sets.count <= Int(UInt8.max) else { throw .invalidValue(field: "Num_Sets", value: sets.count) }
        self.enable = enable
        self.sets = sets
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readBooleanParameter("Enable")
        sets = try reader.readParameterArray(minimumEntrySize: AdvertisingSet.size, AdvertisingSet.init(decoding:))
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(enable)
        writer.writeParameterArray(sets) { set, writer in set.encode(into: &writer) }
    }
}

/// LE Read Maximum Advertising Data Length (7.8.57): how much data one set may hold.
public struct LEReadMaximumAdvertisingDataLength: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x003A)
    public static let name = "LE Read Maximum Advertising Data Length"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 6) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        public let maximumAdvertisingDataLength: UInt16

        public init(maximumAdvertisingDataLength: UInt16) {
            self.maximumAdvertisingDataLength = maximumAdvertisingDataLength
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            maximumAdvertisingDataLength = try reader.readUInt16()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(maximumAdvertisingDataLength) }
    }
}

/// LE Read Number of Supported Advertising Sets (7.8.58).
public struct LEReadNumberOfSupportedAdvertisingSets: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x003B)
    public static let name = "LE Read Number of Supported Advertising Sets"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (36, 7) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable {
        /// Num_Supported_Advertising_Sets.
        public let numberOfSupportedAdvertisingSets: UInt8

        public init(numberOfSupportedAdvertisingSets: UInt8) {
            self.numberOfSupportedAdvertisingSets = numberOfSupportedAdvertisingSets
        }

        public init(decoding reader: inout ByteReader) throws(DecodeError) {
            numberOfSupportedAdvertisingSets = try reader.readUInt8()
            try reader.expectEnd()
        }

        public func encode(into writer: inout ByteWriter) { writer.write(numberOfSupportedAdvertisingSets) }
    }
}

/// LE Remove Advertising Set (7.8.59).
public struct LERemoveAdvertisingSet: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x003C)
    public static let name = "LE Remove Advertising Set"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (37, 0) }

    public let advertisingHandle: UInt8

    public init(advertisingHandle: UInt8) { self.advertisingHandle = advertisingHandle }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(advertisingHandle) }
}

/// LE Clear Advertising Sets (7.8.60).
public struct LEClearAdvertisingSets: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x003D)
    public static let name = "LE Clear Advertising Sets"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (37, 1) }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(DecodeError) { try reader.expectEnd() }
    public func encodeParameters(into writer: inout ByteWriter) {}
}
