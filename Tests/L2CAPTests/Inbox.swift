import BluetoothCore

/// Collects what a channel or connection handler was told.
final class Inbox<Event: Sendable>: Sendable {
    private let events = Lock<[Event]>([])
    func append(_ event: Event) { events.withLock { $0.append(event) } }
    var all: [Event] { events.withLock { $0 } }
}
