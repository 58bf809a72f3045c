import BluetoothCore

/// One discovered-device event as the scanner hands it out: an advertising PDU, with the
/// scan response that answered it merged in when scanning is active, reassembled when an
/// extended advertisement came in several reports.
///
/// Built from LE Advertising Report (0x02), LE Directed Advertising Report (0x0B) and LE
/// Extended Advertising Report (0x0D) alike (Core Vol 4 Part E 7.7.65.2, .11, .13), so
/// consumers need not care which scan commands the controller was given.
public struct Advertisement: Sendable, Hashable {
    /// What kind of PDU this was. Legacy reports are mapped onto the extended report's
    /// property bits, so one set of flags describes both.
    public struct EventType: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let connectable = EventType(rawValue: 1 << 0)
        public static let scannable = EventType(rawValue: 1 << 1)
        public static let directed = EventType(rawValue: 1 << 2)
        /// ``Advertisement/scanResponseData`` holds the device's scan response.
        public static let scanResponse = EventType(rawValue: 1 << 3)
        /// The advertiser used a legacy advertising PDU (ADV_IND and friends).
        public static let legacy = EventType(rawValue: 1 << 4)
        /// A scan response whose advertisement was not seen (or was already delivered):
        /// ``Advertisement/advertisingData`` is empty.
        public static let scanResponseOnly = EventType(rawValue: 1 << 5)

        public var description: String {
            var text: [UInt8] = []
            appendDescription(to: &text)
            return String(decoding: text, as: UTF8.self)
        }

        /// Appends ``description`` ("connectable,scannable,legacy") as ASCII bytes, with no
        /// String in between: for output built as bytes (a tool's JSON lines).
        public func appendDescription(to out: inout [UInt8]) {
            var first = true
            for (flag, name) in Self.names where contains(flag) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            }
            if first { out.append(contentsOf: "non-connectable".utf8) }
        }

        private static let names: [(EventType, StaticString)] = [
            (.connectable, "connectable"), (.scannable, "scannable"), (.directed, "directed"),
            (.scanResponse, "scan-response"), (.legacy, "legacy"), (.scanResponseOnly, "scan-response-only"),
        ]
    }

    public var address: DeviceAddress
    public var eventType: EventType
    /// dBm; nil when the controller reported 127 ("not available").
    public var rssi: Int8?
    /// dBm as the advertiser stated it in the extended header; nil when absent.
    public var txPower: Int8?
    public var primaryPHY: LEPHY
    /// nil when the advertisement used no secondary advertising channel (legacy PDUs).
    public var secondaryPHY: LEPHY?
    /// Advertising_SID 0x00...0x0F; nil when the PDU carried no ADI (legacy PDUs).
    public var advertisingSID: UInt8?
    /// The address a directed advertisement was sent to.
    public var directAddress: DeviceAddress?
    public var advertisingData: AdvertisingData
    /// The scan response merged into this advertisement; nil when none arrived.
    public var scanResponseData: AdvertisingData?
    /// The controller could not receive all of an extended advertisement's data: what is
    /// here is a prefix (data status "incomplete, truncated").
    public var isTruncated: Bool
    /// Monotonic nanoseconds (CLOCK_MONOTONIC) at which the report reached the scanner on
    /// the transport's reader thread; for a merged scan response, when the response did.
    public var timestamp: UInt64

    public init(
        address: DeviceAddress,
        eventType: EventType,
        rssi: Int8? = nil,
        txPower: Int8? = nil,
        primaryPHY: LEPHY = .le1M,
        secondaryPHY: LEPHY? = nil,
        advertisingSID: UInt8? = nil,
        directAddress: DeviceAddress? = nil,
        advertisingData: AdvertisingData = .empty,
        scanResponseData: AdvertisingData? = nil,
        isTruncated: Bool = false,
        timestamp: UInt64 = 0
    ) {
        self.address = address
        self.eventType = eventType
        self.rssi = rssi
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.directAddress = directAddress
        self.advertisingData = advertisingData
        self.scanResponseData = scanResponseData
        self.isTruncated = isTruncated
        self.timestamp = timestamp
    }

    public var isConnectable: Bool { eventType.contains(.connectable) }

    /// The local name from the advertising data, else from the scan response.
    public var localName: String? { advertisingData.localName ?? scanResponseData?.localName }

    /// Service UUIDs listed in the advertising data and the scan response.
    public var serviceUUIDs: [BluetoothUUID] {
        guard let scanResponseData else { return advertisingData.serviceUUIDs }
        return advertisingData.serviceUUIDs + scanResponseData.serviceUUIDs
    }
}
