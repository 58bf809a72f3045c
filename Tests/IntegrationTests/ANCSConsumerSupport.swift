import ANCS
import ANCSConsumer
import BareBLE
import BluetoothCore
import Bonding
import Foundation
import Testing
import TestSupport

/// A virtual radio for one ANCS suite, with the emulated iPhone (tools/virtual-radio,
/// "Emulated iPhone"). A phone connects to the first solicitation it hears, so each suite
/// has a radio of its own (suites run in parallel) and runs serialized; each test adds its
/// own phone, and the earlier ones leave first.
final class ANCSRadio: Sendable {
    let harness: RadioHarness
    let log: RadioEventLog
    private let phones = Lock<[String]>([])

    init() throws {
        harness = try RadioHarness(arguments: ["--tcp"])
        log = RadioEventLog(harness)
    }

    /// A new phone, present and scanning for a solicitation (or not, with `present=0`).
    func addPhone(_ options: String = "") async throws -> String {
        for name in phones.withLock({ $0 }) { _ = try? await log.control("iphone \(name) leave", timeout: .seconds(30)) }
        let ack = try await log.control("add-iphone \(options)".trimmingCharacters(in: .whitespaces))
        let name = try #require(ack["peer"] as? String)
        phones.withLock { $0.append(name) }
        return name
    }

    /// `iphone NAME ACTION`, acknowledged.
    @discardableResult
    func phone(_ name: String, _ action: String, timeout: Duration = .seconds(60)) async throws -> [String: Any] {
        try await log.control("iphone \(name) \(action)", timeout: timeout)
    }

    /// A consumer on a fresh exposed controller with its own bond store, started.
    func consumer(
        name: String, session: ANCSSessionConfiguration = ANCSSessionConfiguration()
    ) async throws -> (Central, ANCSConsumer, EventReader<ANCSConsumerEvent>) {
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort))
        let info = try await central.powerOn()
        central.security = SecurityPolicy(bonds: try BondStore(directory: PeripheralHostPairing.bondDirectory(), identity: .public(info.address)))
        let consumer = try ANCSConsumer(central: central, options: ANCSConsumer.Options(name: name, session: session))
        let events = EventReader(consumer.events())
        try await consumer.start()
        return (central, consumer, events)
    }
}

extension EventReader where Event == ANCSConsumerEvent {
    /// Waits for ANCS to be subscribed (notifications told before it are skipped: wait for
    /// this only when none are expected before it).
    func subscribed(timeout: Duration = .seconds(90)) async throws -> Bool {
        try await next("ANCS subscribed", timeout: timeout) { if case let .subscribed(_, media) = $0 { media } else { nil } }
    }

    /// Waits for a bonding pairing and ANCS subscribed, in either order: the pairing is told
    /// once its bond is saved (an fsync), which on a loaded machine comes after the
    /// subscription it let through (waiting for one, then the other, lost that one).
    func pairedAndSubscribed(timeout: Duration = .seconds(90)) async throws {
        let seen = Lock((paired: false, subscribed: false))
        _ = try await next("a bonding pairing and ANCS subscribed", timeout: timeout) { event -> Bool? in
            seen.withLock { seen in
                switch event {
                case .paired(_, true): seen.paired = true
                case .subscribed: seen.subscribed = true
                default: break
                }
                return seen.paired && seen.subscribed ? true : nil
            }
        }
    }

    /// The next `count` notifications told (any kind), in order.
    func notifications(_ count: Int, timeout: Duration = .seconds(60)) async throws -> [ANCSNotification] {
        var found: [ANCSNotification] = []
        for _ in 0..<count {
            found.append(try await next("notification \(found.count + 1) of \(count)", timeout: timeout) { if case let .notification(n) = $0 { n } else { nil } })
        }
        return found
    }
}
