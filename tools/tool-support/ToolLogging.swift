import BluetoothCore
import Glibc
import Logging

/// The tools' log output: every layer's lines on stderr, one line each, at the level `-v`
/// (info), `-vv` (debug), `-vvv` (trace) or `$BAREBLE_LOG` chose; warnings and worse when
/// neither is given. stdout stays the tools' own output (text or JSON lines).
public enum ToolLogging {
    /// The environment variable that sets the level: trace, debug, info, notice, warning,
    /// error or critical. A `-v` flag given on the command line wins over it.
    public static let environmentVariable = "BAREBLE_LOG"

    /// The level for `verbosity` `-v` flags, else `$BAREBLE_LOG`, else warning.
    public static func level(verbosity: Int, environment: String?) throws(ToolError) -> Logger.Level {
        switch verbosity {
        case 0: break
        case 1: return .info
        case 2: return .debug
        default: return .trace
        }
        guard let environment, !environment.isEmpty else { return .warning }
        guard let level = Logger.Level(rawValue: environment.lowercased()) else {
            throw ToolError("\(environmentVariable)=\(environment) is not a level: use trace, debug, info or warning")
        }
        return level
    }

    /// Sends every logger made from now on to stderr at `level`. The process's logging
    /// system can be set once; a second call (a command that opens two controllers) is
    /// ignored, so the first level stays.
    public static func bootstrap(level: Logger.Level) {
        bootstrapped.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, logLevel: level) }
        }
    }

    private static let bootstrapped = Lock(false)
}

/// One line per record on stderr: time, level, label, message, metadata sorted by key.
/// `2026-11-26T08:01:09.123456Z warning bareble.hci: malformed event dropped malformedEvents=1`
/// Each line goes out in one write(2) (short lines are written whole), so lines from
/// several threads do not interleave.
public struct StandardErrorLogHandler: LogHandler {
    public let label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    public init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var time: [UInt8] = []
        WallClock.appendISO8601(WallClock.offsetFromMonotonic() &+ Int64(bitPattern: MonotonicClock.nanoseconds()), to: &time)
        var line = String(decoding: time, as: UTF8.self) + " \(event.level) \(label): \(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value)"
        }
        var standardError = StandardError()
        standardError.write(line + "\n")
    }
}
