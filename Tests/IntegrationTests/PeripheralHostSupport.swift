import BareBLE
import BluetoothCore
import Bonding
import Foundation
import HCI
import HCITransport
import Testing
import TestSupport

/// One virtual radio for the peripheral-role suites (`PeripheralHost*`): each test opens
/// its own exposed controller and adds its own Bumble GATT centrals (`add-central`), so
/// the suites share the radio without sharing a peer.
enum PeripheralRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp"]) }
    static let log = Result { RadioEventLog(try harness.get()) }

    struct NoEvent: Error, CustomStringConvertible {
        var description: String
    }

    static func open(security: SecurityPolicy = SecurityPolicy()) async throws -> Central {
        let harness = try harness.get()
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort), security: security)
        try await central.powerOn()
        return central
    }

    /// A new Bumble central whose ATT server offers `mtu`; `parametersRequest` false takes
    /// the Connection Parameters Request procedure out of its link layer. Its name.
    static func addCentral(mtu: Int = 247, parametersRequest: Bool = true) async throws -> String {
        let ack = try await log.get().control("add-central mtu=\(mtu) cpr=\(parametersRequest ? 1 : 0)")
        return try #require(ack["peer"] as? String)
    }

    /// `central NAME ACTION`, acknowledged.
    @discardableResult
    static func central(_ name: String, _ action: String, timeout: Duration = .seconds(60)) async throws -> [String: Any] {
        try await log.get().control("central \(name) \(action)", timeout: timeout)
    }

    /// The radio's address for the central `name` adds (C4:4B:4D:00:02:NN, random static).
    static func address(of name: String) throws -> DeviceAddress {
        let number = try #require(UInt64(name.dropFirst("central".count)))
        return DeviceAddress(BluetoothAddress(0xC44B_4D00_0200 + number), type: .random)
    }

    /// A host advertising `advertisedName` on `central`, started, and a radio central
    /// (`radioCentral`, or a new one) given `pairing` settings and connected to it.
    static func accepted(
        on central: Central, advertising advertisedName: String, radioCentral: String? = nil,
        pairing: String? = nil, parametersRequest: Bool = true
    ) async throws -> (host: PeripheralHost, events: HostEvents, name: String, link: RemoteCentral) {
        let address = try #require(central.controller.info?.address)
        let host = try PeripheralHost(central: central, options: try options(name: advertisedName))
        let events = HostEvents(host)
        try await host.start()
        let name = if let radioCentral { radioCentral } else { try await addCentral(parametersRequest: parametersRequest) }
        if let pairing { try await log.get().control("pairing \(name) \(pairing)") }
        try await self.central(name, "connect \(address)")
        return (host, events, name, try await events.connected())
    }

    static func options(name: String, maximumLinks: Int = 4) throws -> PeripheralHost.Options {
        var data = AdvertisingDataBuilder()
        data.flags(.generalDiscoverableLEOnly)
        data.localName(name)
        return PeripheralHost.Options(
            advertising: AdvertisingParameters(kind: .connectableUndirected, interval: .milliseconds(20)),
            data: try data.build(), maximumLinks: maximumLinks)
    }
}

/// Reads a host's events in order, each wait with a deadline.
typealias HostEvents = EventReader<PeripheralHostEvent>

extension EventReader where Event == PeripheralHostEvent {
    convenience init(_ host: PeripheralHost) { self.init(host.events()) }

    func connected(timeout: Duration = .seconds(45)) async throws -> RemoteCentral {
        try await next("connection", timeout: timeout) { if case let .connected(link) = $0 { link } else { nil } }
    }
}

/// Reads an event stream in order, each wait with a deadline.
final class EventReader<Event: Sendable>: @unchecked Sendable {
    private var iterator: AsyncStream<Event>.Iterator

    init(_ stream: AsyncStream<Event>) { iterator = stream.makeAsyncIterator() }

    /// The next event `matching` returns a value for (others are skipped, and named in the
    /// failure when none came), within `timeout`.
    func next<T: Sendable>(_ what: String, timeout: Duration = .seconds(45), _ matching: @escaping @Sendable (Event) -> T?) async throws -> T {
        let box = IteratorBox(iterator)
        let skipped = Lock<[String]>([])
        let found: T? = try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                while let event = await box.next() {
                    if let value = matching(event) { return value }
                    skipped.withLock { $0.append(String(describing: event)) }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        iterator = box.iterator
        guard let found else {
            let others = skipped.withLock { $0 }
            throw PeripheralRadio.NoEvent(description: "no \(what) within \(timeout)" + (others.isEmpty ? "" : "; skipped meanwhile: \(others.suffix(12))"))
        }
        return found
    }

    final class IteratorBox: @unchecked Sendable {
        var iterator: AsyncStream<Event>.Iterator
        init(_ iterator: AsyncStream<Event>.Iterator) { self.iterator = iterator }
        func next() async -> Event? { await iterator.next() }
    }
}
