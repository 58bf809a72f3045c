import Foundation
import InMemoryLogging
import Logging

/// The test process logs nothing by default: the hostile and fuzz tests feed hundreds of
/// thousands of malformed packets, and a warning each on stderr would bury the results.
/// Touched by the scripted transport and bearer before the layers above make their
/// loggers; tests that check log lines hand in a ``LogCapture``'s logger instead.
public enum TestLogging {
    /// `BAREBLE_TEST_LOG=trace|debug|info|warning` logs at that level on stderr instead, to
    /// see what the stack did in a failing integration test.
    public static let quiet: Void = {
        if let name = ProcessInfo.processInfo.environment["BAREBLE_TEST_LOG"], let level = Logger.Level(rawValue: name) {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        } else {
            LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        }
    }()
}

/// Records what a layer logs, for tests that check which lines an event produces. Each test
/// makes its own and hands ``logger(_:)`` to the object under test, so tests running in
/// parallel never see each other's lines (the process-wide LoggingSystem is left alone).
public final class LogCapture: Sendable {
    private let handler: InMemoryLogHandler

    public init() {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
    }

    /// A logger under `label` (a layer's label, e.g. "bareble.hci") that records every level.
    public func logger(_ label: String) -> Logger {
        let handler = self.handler
        return Logger(label: label) { _ in handler }
    }

    /// `capture`'s logger under `label`, or the process-wide one when a test captures nothing.
    public static func logger(_ label: String, from capture: LogCapture?) -> Logger {
        capture?.logger(label) ?? Logger(label: label)
    }

    public struct Line: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        /// Values as text, whatever their kind (string or string-convertible).
        public var metadata: [String: String]
    }

    public var lines: [Line] {
        handler.entries.map { Line(level: $0.level, message: $0.message.description, metadata: $0.metadata.mapValues(\.description)) }
    }

    /// The lines at `level` exactly.
    public func lines(at level: Logger.Level) -> [Line] { lines.filter { $0.level == level } }

    /// The lines at `level` or more severe.
    public func lines(atLeast level: Logger.Level) -> [Line] { lines.filter { $0.level >= level } }
}
