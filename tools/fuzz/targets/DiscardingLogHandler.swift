import Logging

/// The fuzzing process's log handler: every level is on, so each line's message and
/// metadata are built (code the fuzzed input reaches), and then thrown away. Writing them
/// to stderr, as swift-log's default handler does, took about a fifth of a target's time
/// (hundreds of thousands of malformed-input warnings a minute) and filled its log.
struct DiscardingLogHandler: LogHandler {
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {}
}
