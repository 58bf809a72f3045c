import Logging

/// The facade's logger (label `bareble.host`): what the host and its handles drop. Made on
/// first use, so an application bootstraps its LoggingSystem before it builds a host.
enum HostLog {
    static let logger = Logger(label: "bareble.host")

    /// Events the event streams dropped (their oldest) because their readers fell behind.
    static func droppedEvents(_ dropped: Int, total: Int) {
        logger.droppedForOverflow("event dropped: an event stream's reader fell behind", counter: "droppedEvents", count: total, dropped: dropped)
    }
}
