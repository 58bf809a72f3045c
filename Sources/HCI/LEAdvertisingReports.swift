import BluetoothCore

// Legacy advertising reports (Core Vol 4 Part E 7.7.65.2 and .11).
//
// Several reports can share one event, as a parameter array (ParameterArrays.swift). Lengths
// are checked only against the bytes present, not against the specification's ranges
// (Num_Reports 1...25, Data_Length 0...31): a controller that bends those ranges still
// delivers readable reports, and dropping them would stall scanning for nothing.

/// RSSI and TX power fields use 127 for "not available".
let hciPowerNotAvailable: Int8 = 127

/// LE Advertising Report (subevent 0x02): legacy advertisements and scan responses.
public struct LEAdvertisingReport: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.advertisingReport

    /// The legacy PDU a report came from (Event_Type).
    public struct EventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8

        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// ADV_IND: connectable and scannable undirected.
        public static let advInd = EventType(rawValue: 0x00)
        /// ADV_DIRECT_IND: connectable directed.
        public static let advDirectInd = EventType(rawValue: 0x01)
        /// ADV_SCAN_IND: scannable undirected.
        public static let advScanInd = EventType(rawValue: 0x02)
        /// ADV_NONCONN_IND: non-connectable undirected.
        public static let advNonconnInd = EventType(rawValue: 0x03)
        /// SCAN_RSP: a scan response.
        public static let scanRsp = EventType(rawValue: 0x04)

        public var description: String {
            switch self {
            case .advInd: "ADV_IND"
            case .advDirectInd: "ADV_DIRECT_IND"
            case .advScanInd: "ADV_SCAN_IND"
            case .advNonconnInd: "ADV_NONCONN_IND"
            case .scanRsp: "SCAN_RSP"
            default: "event type 0x\(Hex.string([rawValue]))"
            }
        }
    }

    public struct Report: Sendable, Equatable {
        public var eventType: EventType
        public var addressType: ReportedAddressType
        public var address: BluetoothAddress
        /// The advertising data or scan response data; at most 255 bytes encode.
        public var data: [UInt8]
        /// dBm; 127 means not available.
        public var rssi: Int8

        public init(eventType: EventType, addressType: ReportedAddressType, address: BluetoothAddress, data: [UInt8], rssi: Int8) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.data = data
            self.rssi = rssi
        }

        /// The RSSI, or nil when the controller could not measure it.
        public var availableRSSI: Int8? { rssi == hciPowerNotAvailable ? nil : rssi }

        /// Event type, address type, address, data length, RSSI: the bytes of an empty report.
        static let minimumSize = 10

        init(decoding reader: inout ByteReader) throws(DecodeError) {
            eventType = EventType(rawValue: try reader.readUInt8())
            addressType = ReportedAddressType(rawValue: try reader.readUInt8())
            address = try reader.readAddress()
            // readBytes checks the length against what remains before copying.
            data = try reader.readBytes(Int(try reader.readUInt8()))
            rssi = try reader.readInt8()
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(eventType.rawValue)
            writer.write(addressType.rawValue)
            writer.write(address)
            let data = data.prefix(255)
            writer.write(UInt8(data.count))
            writer.write(contentsOf: data)
            writer.write(rssi)
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

/// LE Directed Advertising Report (subevent 0x0B): directed advertisements addressed to a
/// resolvable private address the controller could not resolve, left to the host.
public struct LEDirectedAdvertisingReport: LEMetaSubevent {
    public static let subeventCode = LEMetaEvent.Code.directedAdvertisingReport

    public struct Report: Sendable, Equatable {
        /// Always ADV_DIRECT_IND (0x01) per the specification; kept raw.
        public var eventType: LEAdvertisingReport.EventType
        public var addressType: ReportedAddressType
        public var address: BluetoothAddress
        /// Random (0x01) per the specification: the unresolved RPA the PDU was sent to.
        public var directAddressType: ReportedAddressType
        public var directAddress: BluetoothAddress
        /// dBm; 127 means not available.
        public var rssi: Int8

        public init(
            eventType: LEAdvertisingReport.EventType = .advDirectInd, addressType: ReportedAddressType,
            address: BluetoothAddress, directAddressType: ReportedAddressType, directAddress: BluetoothAddress, rssi: Int8
        ) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.directAddressType = directAddressType
            self.directAddress = directAddress
            self.rssi = rssi
        }

        public var availableRSSI: Int8? { rssi == hciPowerNotAvailable ? nil : rssi }

        static let size = 16

        init(decoding reader: inout ByteReader) throws(DecodeError) {
            eventType = .init(rawValue: try reader.readUInt8())
            addressType = .init(rawValue: try reader.readUInt8())
            address = try reader.readAddress()
            directAddressType = .init(rawValue: try reader.readUInt8())
            directAddress = try reader.readAddress()
            rssi = try reader.readInt8()
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(eventType.rawValue)
            writer.write(addressType.rawValue)
            writer.write(address)
            writer.write(directAddressType.rawValue)
            writer.write(directAddress)
            writer.write(rssi)
        }
    }

    public var reports: [Report]

    public init(reports: [Report]) { self.reports = reports }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        reports = try reader.readParameterArray(minimumEntrySize: Report.size, Report.init(decoding:))
    }

    /// At most 255 reports fit the one-byte count; more are not encoded.
    public func encode(into writer: inout ByteWriter) {
        writer.writeParameterArray(reports) { report, writer in report.encode(into: &writer) }
    }
}
