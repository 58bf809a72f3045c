import BluetoothCore

/// Joins an extended advertisement that the controller reported in pieces (data status
/// "incomplete, more to come") back into one, per advertiser, SID and PDU kind
/// (advertising data or scan response), as Core Vol 4 Part E 7.7.65.13 describes.
///
/// Bounded twice, because the pieces come from the air: an advertisement longer than
/// ``maximumDataLength`` (the most extended advertising can carry, Vol 4 Part E 7.8.54)
/// is dropped whole, and past ``maximumInProgress`` assemblies the oldest is abandoned.
/// Both are counted in ``ScanStatistics``, never trapped on.
///
/// A chain whose end never comes (the controller must end each one "complete" or
/// "truncated"; a faulty one, or scanning stopped by the host, leaves it open) is dropped
/// and counted (`unfinishedAssemblies`) once no piece of it has come for
/// ``maximumPieceGap``, checked at every report, and when scanning stops. Within that
/// time a faulty controller's open chain is still joined to its set's next advertisement:
/// nothing in a report tells a chain's first piece from a later one.
struct ExtendedReportReassembly: Sendable {
    static let maximumDataLength = 1650
    static let defaultMaximumInProgress = 16
    /// The longest AuxOffset (8191 x 300 us = 2.457 s, Vol 6 Part B 2.3.4.5) between two
    /// pieces of one chain, plus room for the host to read the events late.
    static let maximumPieceGap: UInt64 = 3_000_000_000

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
        /// When its latest piece came (monotonic nanoseconds).
        var lastPiece: UInt64
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

    /// `now`: when the report reached the host (monotonic nanoseconds).
    mutating func add(_ report: LEExtendedAdvertisingReport.Report, now: UInt64, statistics: inout ScanStatistics) -> Outcome {
        let status = report.eventType.dataStatus
        // The common case: a complete report and nothing being assembled.
        if status == .complete, inProgress.isEmpty { return .complete(data: report.data, truncated: false) }
        dropStale(now: now, statistics: &statistics)
        let key = Key(
            address: report.address, addressType: report.addressType.rawValue,
            advertisingSID: report.advertisingSID, scanResponse: report.eventType.contains(.scanResponse)
        )
        let index = inProgress.firstIndex { $0.key == key }
        switch status {
        case .incompleteMoreToCome:
            if let index {
                inProgress[index].lastPiece = now
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
            inProgress.append(Assembly(key: key, data: report.data, discarding: false, lastPiece: now))
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

    /// Drops every chain with no piece for longer than ``maximumPieceGap`` (one already
    /// counted as oversized is not counted again).
    private mutating func dropStale(now: UInt64, statistics: inout ScanStatistics) {
        inProgress.removeAll { assembly in
            guard now &- assembly.lastPiece > Self.maximumPieceGap else { return false }
            if !assembly.discarding { statistics.unfinishedAssemblies += 1 }
            return true
        }
    }

    /// Scanning stopped or the controller was reset: no open chain will be finished.
    mutating func abandonAll(statistics: inout ScanStatistics) {
        statistics.unfinishedAssemblies += inProgress.count(where: { !$0.discarding })
        inProgress.removeAll()
    }
}
