import BluetoothCore

// Scanning, legacy (Core Vol 4 Part E 7.8.10, 7.8.11) and extended (7.8.64, 7.8.65).

/// LE Set Scan Parameters (7.8.10).
public struct LESetScanParameters: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x000B)
    public static let name = "LE Set Scan Parameters"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 2) }

    public let leScanType: LEScanType
    /// Units of 0.625 ms.
    public let leScanInterval: UInt16
    /// Units of 0.625 ms; at most the interval.
    public let leScanWindow: UInt16
    public let ownAddressType: AddressType
    public let scanningFilterPolicy: ScanningFilterPolicy

    public init(
        leScanType: LEScanType,
        leScanInterval: UInt16,
        leScanWindow: UInt16,
        ownAddressType: AddressType,
        scanningFilterPolicy: ScanningFilterPolicy = .basicUnfiltered
    ) {
        self.leScanType = leScanType
        self.leScanInterval = leScanInterval
        self.leScanWindow = leScanWindow
        self.ownAddressType = ownAddressType
        self.scanningFilterPolicy = scanningFilterPolicy
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        leScanType = LEScanType(rawValue: try reader.readUInt8())
        leScanInterval = try reader.readUInt16()
        leScanWindow = try reader.readUInt16()
        ownAddressType = try reader.readAddressTypeParameter("Own_Address_Type")
        scanningFilterPolicy = ScanningFilterPolicy(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(leScanType.rawValue)
        writer.write(leScanInterval)
        writer.write(leScanWindow)
        writer.writeAddressTypeParameter(ownAddressType)
        writer.write(scanningFilterPolicy.rawValue)
    }
}

/// LE Set Scan Enable (7.8.11).
public struct LESetScanEnable: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x000C)
    public static let name = "LE Set Scan Enable"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (26, 3) }

    /// LE_Scan_Enable.
    public let enable: Bool
    /// Filter_Duplicates: the controller drops repeated reports of the same advertiser.
    public let filterDuplicates: Bool

    public init(enable: Bool, filterDuplicates: Bool) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readBooleanParameter("LE_Scan_Enable")
        filterDuplicates = try reader.readBooleanParameter("Filter_Duplicates")
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(enable)
        writer.write(filterDuplicates)
    }
}

/// LE Set Extended Scan Parameters (7.8.64): per-PHY scan settings. The wire carries one
/// entry per bit set in Scanning_PHYs, interleaved per PHY in bit order.
public struct LESetExtendedScanParameters: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0041)
    public static let name = "LE Set Extended Scan Parameters"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (37, 5) }

    /// Scan_Type[i], Scan_Interval[i], Scan_Window[i] for one PHY.
    public struct PHYParameters: Hashable, Sendable {
        public let scanType: LEScanType
        /// Units of 0.625 ms.
        public let scanInterval: UInt16
        /// Units of 0.625 ms.
        public let scanWindow: UInt16

        public init(scanType: LEScanType, scanInterval: UInt16, scanWindow: UInt16) {
            self.scanType = scanType
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
        }

        init(decoding reader: inout ByteReader) throws(DecodeError) {
            scanType = LEScanType(rawValue: try reader.readUInt8())
            scanInterval = try reader.readUInt16()
            scanWindow = try reader.readUInt16()
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(scanType.rawValue)
            writer.write(scanInterval)
            writer.write(scanWindow)
        }
    }

    public let ownAddressType: AddressType
    public let scanningFilterPolicy: ScanningFilterPolicy
    public let scanningPHYs: LEPHYMask
    /// One entry per bit set in ``scanningPHYs``, lowest bit first.
    public let phyParameters: [PHYParameters]

    /// Throws `lengthMismatch` unless there is one entry per bit set in `scanningPHYs`.
    public init(
        ownAddressType: AddressType,
        scanningFilterPolicy: ScanningFilterPolicy = .basicUnfiltered,
        scanningPHYs: LEPHYMask,
        phyParameters: [PHYParameters]
    ) throws(DecodeError) {
        try checkPHYEntries(phyParameters.count, mask: scanningPHYs)
        self.ownAddressType = ownAddressType
        self.scanningFilterPolicy = scanningFilterPolicy
        self.scanningPHYs = scanningPHYs
        self.phyParameters = phyParameters
    }

    /// Scans on LE 1M and/or LE Coded (the only PHYs advertising uses for primary channels);
    /// the mask follows from which arguments are given, so this cannot fail.
    public init(
        ownAddressType: AddressType,
        scanningFilterPolicy: ScanningFilterPolicy = .basicUnfiltered,
        le1M: PHYParameters?,
        leCoded: PHYParameters? = nil
    ) {
        self.ownAddressType = ownAddressType
        self.scanningFilterPolicy = scanningFilterPolicy
        (scanningPHYs, phyParameters) = phyEntries([(.le1M, le1M), (.leCoded, leCoded)])
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        ownAddressType = try reader.readAddressTypeParameter("Own_Address_Type")
        scanningFilterPolicy = ScanningFilterPolicy(rawValue: try reader.readUInt8())
        scanningPHYs = LEPHYMask(rawValue: try reader.readUInt8())
        phyParameters = try reader.readPHYEntries(scanningPHYs, PHYParameters.init(decoding:))
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeAddressTypeParameter(ownAddressType)
        writer.write(scanningFilterPolicy.rawValue)
        writer.write(scanningPHYs.rawValue)
        for entry in phyParameters { entry.encode(into: &writer) }
    }
}

/// Filter_Duplicates of LE Set Extended Scan Enable, which has a third value the legacy
/// command lacks. Boolean literals work for the first two.
public struct ExtendedScanFilterDuplicates: RawRepresentable, Hashable, Sendable, ExpressibleByBooleanLiteral {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(booleanLiteral value: Bool) { rawValue = value ? 0x01 : 0x00 }

    public static let disabled = ExtendedScanFilterDuplicates(rawValue: 0x00)
    public static let enabled = ExtendedScanFilterDuplicates(rawValue: 0x01)
    /// Filter duplicates, forgetting the seen advertisers at the start of each Period.
    public static let enabledResetEachPeriod = ExtendedScanFilterDuplicates(rawValue: 0x02)
}

/// LE Set Extended Scan Enable (7.8.65).
public struct LESetExtendedScanEnable: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: HCIOpcode.Group.le, ocf: 0x0042)
    public static let name = "LE Set Extended Scan Enable"
    public static var supportedCommandBit: (octet: Int, bit: Int)? { (37, 6) }

    public let enable: Bool
    public let filterDuplicates: ExtendedScanFilterDuplicates
    /// Units of 10 ms; 0 scans until disabled.
    public let duration: UInt16
    /// Units of 1.28 s; 0 scans continuously.
    public let period: UInt16

    public init(enable: Bool, filterDuplicates: ExtendedScanFilterDuplicates, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }

    public init(parameters reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readBooleanParameter("Enable")
        filterDuplicates = ExtendedScanFilterDuplicates(rawValue: try reader.readUInt8())
        duration = try reader.readUInt16()
        period = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(enable)
        writer.write(filterDuplicates.rawValue)
        writer.write(duration)
        writer.write(period)
    }
}
