import BluetoothCore

/// Joins an extended advertisement that the controller reported in pieces (data status
/// "incomplete, more to come") back into one, per advertiser, SID and PDU kind
/// (advertising data or scan response), as Core Vol 4 Part E 7.7.65.13 describes.
///
/// Bounded twice, because the pieces come from the air: an advertisement longer than
/// ``maximumDataLength`` (the most extended advertising can carry, Vol 4 Part E 7.8.54)
/// is dropped whole, and past ``maximumInProgress`` assemblies the oldest is abandoned.
/// Both are counted in ``ScanStatistics``, never trapped on.
struct ExtendedReportReassembly: Sendable {
    static let maximumDataLength = 1650
    static let defaultMaximumInProgress = 16

    struct Key: Hashable, Sendable {
        var address: BluetoothAddress
        var addressType: UInt8
        var advertisingSID: UInt8
        var scanResponse: Bool
    }

    struct Assembly: Sendable {
        var key: Key
        var data: [UInt8]
        /// Too long already: the rest of its pieces are swallowed until the last one.
        var discarding: Bool
    }

    enum Outcome: Equatable {
        /// The whole data (or, when truncated, all the controller could receive).
        case complete(data: [UInt8], truncated: Bool)
        /// More pieces will follow, or the advertisement was dropped.
        case none
    }

    let maximumInProgress: Int
    /// Oldest first. A handful at most in practice, so a linear search beats hashing.
    private(set) var inProgress: [Assembly] = []

    init(maximumInProgress: Int = ExtendedReportReassembly.defaultMaximumInProgress) {
        self.maximumInProgress = max(1, maximumInProgress)
    }

    mutating func add(_ report: LEExtendedAdvertisingReport.Report, statistics: inout ScanStatistics) -> Outcome {
        let status = report.eventType.dataStatus
        // The common case: a complete report and nothing being assembled.
        if status == .complete, inProgress.isEmpty { return .complete(data: report.data, truncated: false) }
        let key = Key(
            address: report.address, addressType: report.addressType.rawValue,
            advertisingSID: report.advertisingSID, scanResponse: report.eventType.contains(.scanResponse)
        )
        let index = inProgress.firstIndex { $0.key == key }
        switch status {
        case .incompleteMoreToCome:
            if let index {
                guard !inProgress[index].discarding else { return .none }
                inProgress[index].data.append(contentsOf: report.data)
                if inProgress[index].data.count > Self.maximumDataLength {
                    inProgress[index].data = []
                    inProgress[index].discarding = true
                    statistics.oversizedAdvertisements += 1
                }
                return .none
            }
            if inProgress.count >= maximumInProgress {
                inProgress.removeFirst()
                statistics.abandonedAssemblies += 1
            }
            inProgress.append(Assembly(key: key, data: report.data, discarding: false))
            return .none
        case .complete, .incompleteTruncated:
            let truncated = status == .incompleteTruncated
            guard let index else { return .complete(data: report.data, truncated: truncated) }
            let assembly = inProgress.remove(at: index)
            if assembly.discarding { return .none }
            guard assembly.data.count + report.data.count <= Self.maximumDataLength else {
                statistics.oversizedAdvertisements += 1
                return .none
            }
            statistics.reassembledAdvertisements += 1
            return .complete(data: assembly.data + report.data, truncated: truncated)
        case .reserved:
            if let index { inProgress.remove(at: index) }
            statistics.malformedReports += 1
            return .none
        }
    }

    mutating func removeAll() { inProgress.removeAll() }
}
