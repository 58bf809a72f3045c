/// What the scanner dropped, merged or could not pair. A healthy scan shows zeros in the
/// dropped and malformed counters.
public struct ScanStatistics: Sendable, Equatable {
    /// Individual reports taken from advertising report events.
    public var reports = 0
    public var mergedScanResponses = 0
    /// Scan responses delivered without their advertisement.
    public var unpairedScanResponses = 0
    /// Scannable advertisements whose scan response did not come in time.
    public var heldAdvertisementsDeliveredAlone = 0
    public var reassembledAdvertisements = 0
    public var truncatedAdvertisements = 0
    /// Extended advertisements longer than 1650 bytes, dropped whole.
    public var oversizedAdvertisements = 0
    /// Reassemblies abandoned because too many were in progress.
    public var abandonedAssemblies = 0
    /// Extended advertisements whose last piece never came (no piece for 3 s, past the
    /// longest AuxOffset, or scanning stopped mid-chain): their pieces dropped.
    public var unfinishedAssemblies = 0
    /// Reports with a reserved data status or address type, dropped.
    public var malformedReports = 0
    /// Anonymous extended advertisements (no address), dropped: an Advertisement has one.
    public var anonymousReports = 0
    /// Advertisements a stream consumer's buffer had no room for.
    public var streamBufferDrops = 0

    public init() {}

    /// The counters of reports dropped on the way in, compared before and after each event
    /// so that the scanner logs a drop without touching anything else on its hot path.
    struct Drops: Equatable {
        var malformedReports: Int
        var oversizedAdvertisements: Int
        var abandonedAssemblies: Int
        var unfinishedAssemblies: Int
        var anonymousReports: Int
    }

    var drops: Drops {
        Drops(
            malformedReports: malformedReports, oversizedAdvertisements: oversizedAdvertisements,
            abandonedAssemblies: abandonedAssemblies, unfinishedAssemblies: unfinishedAssemblies,
            anonymousReports: anonymousReports)
    }
}
