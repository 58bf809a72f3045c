import BluetoothCore

/// LE Extended Advertising Report (subevent 0x0D, Core Vol 4 Part E 7.7.65.13): what a
/// scanner started with LE Set Extended Scan Enable reports, legacy PDUs included.
///
/// A long advertisement arrives as several reports with the same address and SID whose
/// ``Report/EventType/dataStatus`` says more is coming; reassembly is the scanner's job.
public struct LEExtendedAdvertisingReport: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.extendedAdvertisingReport

    /// Event_Type: five property bits and a two-bit data status. All 16 bits are kept, so
    /// reserved bits survive a round trip.
    public struct EventType: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16

        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let connectable = EventType(rawValue: 1 << 0)
        public static let scannable = EventType(rawValue: 1 << 1)
        public static let directed = EventType(rawValue: 1 << 2)
        public static let scanResponse = EventType(rawValue: 1 << 3)
        /// The report came from a legacy advertising PDU.
        public static let legacy = EventType(rawValue: 1 << 4)

        public enum DataStatus: UInt8, Sendable, Hashable {
            case complete = 0b00
            /// More reports with the rest of the data follow.
            case incompleteMoreToCome = 0b01
            /// The data was cut short and nothing more will follow.
            case incompleteTruncated = 0b10
            case reserved = 0b11
        }

        /// Bits 5 and 6.
        public var dataStatus: DataStatus {
            get { DataStatus(rawValue: UInt8(truncatingIfNeeded: rawValue >> 5) & 0b11) ?? .reserved }
            set { self = EventType(rawValue: rawValue & ~(0b11 << 5) | UInt16(newValue.rawValue) << 5) }
        }
    }

    public struct Report: Sendable, Equatable {
        public var eventType: EventType
        /// 0x00...0x03, or ``ReportedAddressType/anonymous`` (0xFF) for anonymous advertising.
        public var addressType: ReportedAddressType
        public var address: BluetoothAddress
        public var primaryPHY: LEPHY
        /// ``LEPHY/none`` when no secondary channel was used.
        public var secondaryPHY: LEPHY
        /// Advertising_SID 0x00...0x0F; 0xFF when the PDU carried no ADI.
        public var advertisingSID: UInt8
        /// dBm; 127 means not available.
        public var txPower: Int8
        /// dBm; 127 means not available.
        public var rssi: Int8
        /// Units of 1.25 ms; 0 when there is no periodic advertising.
        public var periodicAdvertisingInterval: UInt16
        /// For directed PDUs. Per the specification 0x00/0x01 are public/random, 0x02/0x03
        /// an RPA the controller resolved to our own address, and 0xFE one it could not resolve;
        /// kept raw with those meanings.
        public var directAddressType: ReportedAddressType
        public var directAddress: BluetoothAddress
        /// At most 255 bytes encode.
        public var data: [UInt8]

        public init(
            eventType: EventType, addressType: ReportedAddressType, address: BluetoothAddress,
            primaryPHY: LEPHY, secondaryPHY: LEPHY, advertisingSID: UInt8, txPower: Int8, rssi: Int8,
            periodicAdvertisingInterval: UInt16, directAddressType: ReportedAddressType,
            directAddress: BluetoothAddress, data: [UInt8]
        ) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.txPower = txPower
            self.rssi = rssi
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = directAddress
            self.data = data
        }

        public var availableRSSI: Int8? { rssi == hciPowerNotAvailable ? nil : rssi }
        public var availableTXPower: Int8? { txPower == hciPowerNotAvailable ? nil : txPower }

        /// The bytes of a report with no data.
        static let minimumSize = 24

        init(decoding reader: inout ByteReader) throws(DecodeError) {
            eventType = EventType(rawValue: try reader.readUInt16())
            addressType = ReportedAddressType(rawValue: try reader.readUInt8())
            address = try reader.readAddress()
            primaryPHY = LEPHY(rawValue: try reader.readUInt8())
            secondaryPHY = LEPHY(rawValue: try reader.readUInt8())
            advertisingSID = try reader.readUInt8()
            txPower = try reader.readInt8()
            rssi = try reader.readInt8()
            periodicAdvertisingInterval = try reader.readUInt16()
            directAddressType = ReportedAddressType(rawValue: try reader.readUInt8())
            directAddress = try reader.readAddress()
            // readBytes checks the length against what remains before copying.
            data = try reader.readBytes(Int(try reader.readUInt8()))
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(eventType.rawValue)
            writer.write(addressType.rawValue)
            writer.write(address)
            writer.write(primaryPHY.rawValue)
            writer.write(secondaryPHY.rawValue)
            writer.write(advertisingSID)
            writer.write(txPower)
            writer.write(rssi)
            writer.write(periodicAdvertisingInterval)
            writer.write(directAddressType.rawValue)
            writer.write(directAddress)
            let data = data.prefix(255)
            writer.write(UInt8(data.count))
            writer.write(contentsOf: data)
        }
    }

    public var reports: [Report]

    public init(reports: [Report]) { self.reports = reports }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        reports = try reader.readParameterArray(minimumEntrySize: Report.minimumSize, Report.init(decoding:))
    }

    /// At most 255 reports fit the one-byte count; more are not encoded.
    public func encode(into writer: inout ByteWriter) {
        writer.writeParameterArray(reports) { report, writer in report.encode(into: &writer) }
    }
}

extension LEExtendedAdvertisingReport.EventType: CustomStringConvertible {
    public var description: String {
        var parts: [String] = []
        if contains(.connectable) { parts.append("connectable") }
        if contains(.scannable) { parts.append("scannable") }
        if contains(.directed) { parts.append("directed") }
        if contains(.scanResponse) { parts.append("scan-response") }
        if contains(.legacy) { parts.append("legacy") }
        switch dataStatus {
        case .complete: break
        case .incompleteMoreToCome: parts.append("more-to-come")
        case .incompleteTruncated: parts.append("truncated")
        case .reserved: parts.append("data-status-reserved")
        }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}
