import ATT
import BluetoothCore
import Logging

/// The Service Changed ranges waiting for rediscovery (Core 5.4 Vol 3 Part G 7.1), bounded
/// whatever the server sends: at most one range is being rediscovered and at most one
/// waits. A range that arrives while one waits is merged into it (the smallest range that
/// covers both), since rediscovering that covers both changes; so a burst of thousands of
/// indications costs two rediscoveries. Values are taken on the bearer's thread, without
/// a task hop or an unbounded stream between the bearer and the client.
final class ServiceChangedQueue: Sendable {
    private struct State {
        var running = false
        var waiting: ClosedRange<UInt16>?
        var statistics = GATTClient.ServiceChangedStatistics()
    }

    private let state = Lock(State())
    /// The GATT layer's logger: malformed Service Changed values.
    private let logger = Logger(label: "bareble.gatt")

    var statistics: GATTClient.ServiceChangedStatistics { state.withLock { $0.statistics } }

    /// Takes a value pushed on the Service Changed handle. Returns the range to rediscover
    /// when none is running (the caller starts the rediscovery and then asks ``next()``),
    /// nil when the value was ignored or is waiting.
    func offer(_ pushed: ATTHandleValue) -> ClosedRange<UInt16>? {
        var reader = ByteReader(pushed.value)
        let start = try? reader.readUInt16()
        let end = try? reader.readUInt16()
        var malformed: Int?
        defer {
            if let malformed {
                logger.droppedInput(
                    "malformed Service Changed value ignored", counter: "malformedValues", count: malformed,
                    metadata: ["bytes": .prefix(pushed.value)])
            }
        }
        return state.withLock { state in
            // Service Changed is indicate-only (Part G 7.1): a notification is not the
            // server telling the client something it confirmed.
            guard pushed.isIndication else {
                state.statistics.notificationsIgnored += 1
                return nil
            }
            guard let start, let end, reader.isAtEnd, start > 0, start <= end else {
                state.statistics.malformedValues += 1
                malformed = state.statistics.malformedValues
                return nil
            }
            state.statistics.indications += 1
            guard state.running else {
                state.running = true
                state.statistics.rediscoveries += 1
                return start...end
            }
            if let waiting = state.waiting {
                state.statistics.mergedRanges += 1
                state.waiting = min(waiting.lowerBound, start)...max(waiting.upperBound, end)
            } else {
                state.waiting = start...end
            }
            return nil
        }
    }

    /// The range that waited while the last rediscovery ran, or nil, after which the next
    /// indication starts a rediscovery of its own.
    func next() -> ClosedRange<UInt16>? {
        state.withLock { state in
            guard let waiting = state.waiting else {
                state.running = false
                return nil
            }
            state.waiting = nil
            state.statistics.rediscoveries += 1
            return waiting
        }
    }

    func countFailedRediscovery() {
        state.withLock { $0.statistics.failedRediscoveries += 1 }
    }

    func countDroppedChange() {
        state.withLock { $0.statistics.changesDropped += 1 }
    }
}
