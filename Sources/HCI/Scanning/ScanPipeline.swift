import BluetoothCore

/// From advertising report events to finished ``Advertisement`` values: legacy, directed
/// and extended reports are mapped onto one shape, extended pieces reassembled, scan
/// responses merged. Runs on the transport's reader thread under the scanner's lock;
/// time comes in with each event so tests can script it.
struct ScanPipeline: Sendable {
    var reassembly = ExtendedReportReassembly()
    var merger = ScanResponseMerger()
    var statistics = ScanStatistics()
    /// Scanning is active, so scannable advertisements are worth holding for a response.
    var expectScanResponses = false
    /// Finished advertisements of the last call, oldest first. Kept between calls so its
    /// storage is reused: the hot path allocates nothing here once warm.
    var output: [Advertisement] = []

    init() {
        output.reserveCapacity(32)
    }

    /// Appends to ``output`` what `event` finishes. Events other than advertising reports
    /// are ignored.
    mutating func process(_ event: LEMetaEvent, timestamp: UInt64) {
        switch event {
        case let .advertisingReport(event):
            merger.flushExpired(now: timestamp, output: &output, statistics: &statistics)
            for report in event.reports { add(report, timestamp: timestamp) }
        case let .extendedAdvertisingReport(event):
            merger.flushExpired(now: timestamp, output: &output, statistics: &statistics)
            for report in event.reports { add(report, timestamp: timestamp) }
        case let .directedAdvertisingReport(event):
            merger.flushExpired(now: timestamp, output: &output, statistics: &statistics)
            for report in event.reports { add(report, timestamp: timestamp) }
        default:
            break
        }
    }

    /// Hands out everything held and drops open chains (the controller was reset).
    mutating func flushAll() {
        releaseHeld()
        scanningStopped()
    }

    /// Hands out the advertisements held for a scan response (none can come any more).
    mutating func releaseHeld() {
        merger.flushAll(output: &output, statistics: &statistics)
    }

    /// The controller stopped scanning (to be reconfigured, say): chains it was reporting
    /// will not be finished. Held advertisements stay for the scan responses to come.
    mutating func scanningStopped() {
        reassembly.abandonAll(statistics: &statistics)
    }

    private mutating func add(_ report: LEAdvertisingReport.Report, timestamp: UInt64) {
        statistics.reports += 1
        guard let type = report.addressType.addressType else {
            statistics.malformedReports += 1
            return
        }
        let properties: Advertisement.EventType
        switch report.eventType {
        case .advInd: properties = [.legacy, .connectable, .scannable]
        case .advDirectInd: properties = [.legacy, .connectable, .directed]
        case .advScanInd: properties = [.legacy, .scannable]
        case .advNonconnInd: properties = [.legacy]
        case .scanRsp: properties = [.legacy, .scanResponse, .scanResponseOnly]
        default:
            statistics.malformedReports += 1
            return
        }
        let data = AdvertisingData(report.data)
        let isResponse = properties.contains(.scanResponse)
        finish(Advertisement(
            address: DeviceAddress(report.address, type: type),
            eventType: properties,
            rssi: report.availableRSSI,
            advertisingData: isResponse ? .empty : data,
            scanResponseData: isResponse ? data : nil,
            timestamp: timestamp
        ))
    }

    private mutating func add(_ report: LEDirectedAdvertisingReport.Report, timestamp: UInt64) {
        statistics.reports += 1
        guard let type = report.addressType.addressType else {
            statistics.malformedReports += 1
            return
        }
        // The target is an RPA the controller could not resolve: random by definition.
        let directType = report.directAddressType.addressType ?? .random
        finish(Advertisement(
            address: DeviceAddress(report.address, type: type),
            eventType: [.legacy, .connectable, .directed],
            rssi: report.availableRSSI,
            directAddress: DeviceAddress(report.directAddress, type: directType),
            timestamp: timestamp
        ))
    }

    private mutating func add(_ report: LEExtendedAdvertisingReport.Report, timestamp: UInt64) {
        statistics.reports += 1
        if report.addressType == .anonymous {
            statistics.anonymousReports += 1
            return
        }
        guard let type = report.addressType.addressType else {
            statistics.malformedReports += 1
            return
        }
        guard case let .complete(bytes, truncated) = reassembly.add(report, now: timestamp, statistics: &statistics) else { return }
        if truncated { statistics.truncatedAdvertisements += 1 }
        let bits = report.eventType
        var properties: Advertisement.EventType = []
        if bits.contains(.connectable) { properties.insert(.connectable) }
        if bits.contains(.scannable) { properties.insert(.scannable) }
        if bits.contains(.directed) { properties.insert(.directed) }
        if bits.contains(.legacy) { properties.insert(.legacy) }
        let isResponse = bits.contains(.scanResponse)
        if isResponse { properties.formUnion([.scanResponse, .scanResponseOnly]) }
        let data = AdvertisingData(bytes)
        var directAddress: DeviceAddress?
        if bits.contains(.directed) {
            // 0x02/0x03: an RPA resolved to our own identity; 0xFE: unresolved RPA.
            let directType = report.directAddressType.addressType ?? .random
            directAddress = DeviceAddress(report.directAddress, type: directType)
        }
        finish(Advertisement(
            address: DeviceAddress(report.address, type: type),
            eventType: properties,
            rssi: report.availableRSSI,
            txPower: report.availableTXPower,
            primaryPHY: report.primaryPHY,
            secondaryPHY: report.secondaryPHY == .none ? nil : report.secondaryPHY,
            advertisingSID: report.advertisingSID == 0xFF ? nil : report.advertisingSID,
            directAddress: directAddress,
            advertisingData: isResponse ? .empty : data,
            scanResponseData: isResponse ? data : nil,
            isTruncated: truncated,
            timestamp: timestamp
        ))
    }

    private mutating func finish(_ advertisement: Advertisement) {
        merger.add(advertisement, expectScanResponses: expectScanResponses, output: &output, statistics: &statistics)
    }
}
