import Logging
import Synchronization

/// The fuzzing process's log handler: it throws every line away. Writing them to stderr, as
/// swift-log's default handler does, took about a fifth of a target's time (hundreds of
/// thousands of malformed-input warnings a minute) and filled its log.
///
/// Whether lines are built at all is decided per input, by the parity of its length
/// (`select(for:)`): for inputs of odd length every level is on, so each line's message and
/// metadata are built (code the fuzzed input reaches); for even lengths the level is
/// critical, at which the stack logs nothing, so no line is built, as in a deployment that
/// logs nothing. One input always takes the same path, so coverage
/// stays deterministic, and a mutation that adds or removes a byte moves an input between
/// the two. Building every line took 44 % of `att-client`'s time.
struct DiscardingLogHandler: LogHandler {
    private static let linesBuilt = Atomic<Bool>(true)

    /// Chooses the level for one input, before it runs.
    static func select(for input: [UInt8]) {
        linesBuilt.store(input.count % 2 == 1, ordering: .relaxed)
    }

    var logLevel: Logger.Level {
        get { Self.linesBuilt.load(ordering: .relaxed) ? .trace : .critical }
        set {}
    }
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {}
}
