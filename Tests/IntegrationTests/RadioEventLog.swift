import BluetoothCore
import Foundation
import HCITransport
import TestSupport

/// Every line of the radio's event log, kept, so several waiters (the test and a pairing
/// delegate running at the same time) can each find their event without one consuming
/// the other's. Each event is matched at most once.
final class RadioEventLog: Sendable {
    let harness: RadioHarness
    private struct Seen: @unchecked Sendable {
        var events: [[String: Any]] = []
        var taken: Set<Int> = []
    }
    private let seen = Lock(Seen())
    private let reading = Lock(())

    init(_ harness: RadioHarness) { self.harness = harness }

    /// The first event named `name` matching `predicate` not matched before.
    @discardableResult
    func wait(_ name: String, timeout: Duration = .seconds(10), where predicate: @escaping @Sendable ([String: Any]) -> Bool = { _ in true }) async throws -> [String: Any] {
        try await onOwnThread { EventBox(event: try self.waitBlocking(name, timeout: timeout, where: predicate)) }.event
    }

    func waitBlocking(_ name: String, timeout: Duration, where predicate: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = take(name, predicate) { return found }
            guard ContinuousClock.now < deadline else { throw RadioHarness.HarnessError.noEvent(name) }
            // One reader at a time; short reads so other waiters get to look.
            reading.withLock { _ in
                guard let line = try? harness.radio.nextLine(timeout: .milliseconds(50)),
                      let data = line.data(using: .utf8),
                      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return }
                seen.withLock { $0.events.append(object) }
            }
        }
    }

    private func take(_ name: String, _ predicate: ([String: Any]) -> Bool) -> [String: Any]? {
        seen.withLock { seen in
            for (index, event) in seen.events.enumerated() where !seen.taken.contains(index) {
                guard event["event"] as? String == name, predicate(event) else { continue }
                seen.taken.insert(index)
                return event
            }
            return nil
        }
    }

    /// How many events were read so far: a mark for ``events(since:)``.
    var count: Int { seen.withLock { $0.events.count } }

    /// Every event read after `mark`, matched before or not: what a test checks did *not*
    /// happen (wait for an event that comes after it first, so the log was read that far).
    func events(since mark: Int) -> [[String: Any]] {
        seen.withLock { Array($0.events.dropFirst(mark)) }
    }

    /// Sends a control line without waiting for its acknowledgement.
    func send(_ line: String) throws { try harness.radio.send(controlLine: line) }

    /// Sends a control line and waits for its `ack` (an `error` fails).
    @discardableResult
    func control(_ line: String, timeout: Duration = .seconds(10)) async throws -> [String: Any] {
        try send(line)
        return try await onOwnThread {
            let deadline = ContinuousClock.now + timeout
            while true {
                if let error = self.take("error", { $0["command"] as? String == line }) {
                    throw RadioHarness.HarnessError.radioRefused("\(error)")
                }
                if let ack = self.take("ack", { $0["command"] as? String == line }) { return EventBox(event: ack) }
                _ = try? self.waitBlocking("ack", timeout: min(.milliseconds(100), max(.zero, deadline - ContinuousClock.now)), where: { _ in false })
                guard ContinuousClock.now < deadline else { throw RadioHarness.HarnessError.noEvent("ack of \(line)") }
            }
        }.event
    }
}

struct EventBox: @unchecked Sendable {
    var event: [String: Any]
}
