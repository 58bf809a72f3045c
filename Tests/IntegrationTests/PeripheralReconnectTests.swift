import ATT
@testable import BareBLE
import BluetoothCore
import Bonding
import Foundation
@testable import GATT
import HCI
@testable import L2CAP
import SMP
import Testing
import TestSupport

/// A central that connects, subscribes, encrypts with its bond and leaves, again and again:
/// once a link ended nothing of it may stay, neither its objects nor an entry keyed by its
/// handle (the radio's controller reuses handle 1, so a stale entry would be overwritten,
/// not piled up: the tables are checked empty, not just bounded). What memory the process
/// keeps over many reconnects is measured on the tool's process (PeripheralToolReconnectTests).
@Suite(.serialized) struct PeripheralReconnect {
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))

    @Test("connect, subscribe, encrypt with the bond, disconnect: every link's objects are freed and every table keyed by its handle is empty")
    func cycles() async throws {
        let cycles = ProcessInfo.processInfo.environment["BAREBLE_RECONNECT_CYCLES"].flatMap(Int.init) ?? 20
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        central.security = SecurityPolicy(bonds: try BondStore(directory: PeripheralHostPairing.bondDirectory(), identity: .public(address)))
        let manager = try PeripheralManager(
            central: central, advertising: try PeripheralRadio.options(name: "BareBLE-Cycles"),
            services: [GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
                .init(uuid: Self.batteryLevel, properties: [.read, .notify], value: [87],
                      descriptors: [.init(uuid: GATTUUID.clientCharacteristicConfiguration)]),
            ])])
        let events = EventReader(manager.events())
        try await manager.startAdvertising()
        let cccd = try #require(manager.database.characteristic(Self.batteryLevel)?.clientCharacteristicConfigurationHandle)
        let name = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.log.get().control("pairing \(name) io=no-input-no-output sc=1 mitm=0 bonding=1")
        var remains: [Remains] = []
        for cycle in 1...cycles {
            try await PeripheralRadio.central(name, "connect \(address)")
            let remote = try await events.next("connection \(cycle)") { event -> RemoteCentral? in
                if case let .host(.connected(remote)) = event { remote } else { nil }
            }
            if cycle == 1 {
                #expect(try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))["paired"] as? Bool == true)
                try await PeripheralRadio.central(name, "write \(cccd) 0100")
            } else {
                // Gone straight after encrypting: the restore of its CCCDs races the end.
                #expect(try await PeripheralRadio.central(name, "encrypt")["encrypted"] as? Bool == true)
            }
            try await PeripheralRadio.central(name, "disconnect")
            _ = try await events.next("disconnection \(cycle)") { event -> Bool? in
                if case let .host(.disconnected(ended, _)) = event, ended === remote { true } else { nil }
            }
            remains.append(Remains([
                ("RemoteCentral", remote), ("Connection", remote.connection), ("ATTClient", remote.att),
                ("ATTServer", remote.server), ("SecurityManager", remote.security),
            ]))
        }
        // The last link's own task may still be reporting its end; every earlier one is over.
        let leftovers = remains.dropLast().enumerated().filter { !$0.element.alive.isEmpty }
        #expect(leftovers.isEmpty, "links still alive: \(leftovers.prefix(3).map { "cycle \($0.offset + 1): \($0.element.alive)" })")
        #expect(central.linkLeftovers + manager.linkLeftovers == [])
    }
}

/// The central role the same way: our Central connects to the radio's HRM peripheral,
/// discovers (from its cache after the first time), subscribes and disconnects, again and
/// again; each ``Peripheral`` and its link must be freed once the caller drops it.
@Suite(.serialized) struct CentralReconnect {
    /// A radio of its own: the radio's peripheral takes one central at a time, and
    /// GATTFacadeVirtualRadio's tests run beside these (sharing its radio made both time out).
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral"]) }

    @Test("connect, discover, subscribe, disconnect cycles: every Peripheral and its link are freed, no table keeps its handle")
    func cycles() async throws {
        let harness = try Self.harness.get()
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort))
        defer { central.close() }
        try await central.powerOn()
        let heartRate = BluetoothUUID(UInt16(0x2A37))
        var remains: [Remains] = []
        for _ in 1...20 {
            let peripheral = try await central.connect(to: GATTFacadeVirtualRadio.peripheral, timeout: .seconds(20))
            try await peripheral.discoverServices()
            let beats = try await peripheral.notifications(for: try #require(peripheral.characteristic(heartRate)))
            try await peripheral.disconnect()
            for await _ in beats {}
            remains.append(Remains([
                ("Peripheral", peripheral), ("Connection", peripheral.connection), ("ATTClient", peripheral.att), ("GATTClient", peripheral.gatt),
            ]))
        }
        // The last link's own tasks may still be ending; every earlier one is over.
        let leftovers = remains.dropLast().enumerated().filter { !$0.element.alive.isEmpty }
        #expect(leftovers.isEmpty, "links still alive: \(leftovers.prefix(3).map { "cycle \($0.offset + 1): \($0.element.alive)" })")
        #expect(central.linkLeftovers == [])
    }
}

/// Weak references to what one link was made of, by name: which are still alive.
final class Remains: @unchecked Sendable {
    private final class Reference {
        weak var object: AnyObject?
        init(_ object: AnyObject?) { self.object = object }
    }

    private let references: [(name: String, reference: Reference)]

    init(_ objects: [(String, AnyObject?)]) { references = objects.map { ($0.0, Reference($0.1)) } }

    var alive: [String] { references.compactMap { $0.reference.object == nil ? nil : $0.name } }
}

extension Central {
    /// The entries L2CAP and the Connector still keep for a link, named: none once every
    /// link ended.
    var linkLeftovers: [String] {
        (channels?.state.withLock { $0.connections.keys.sorted() }.map { "L2CAP connection \($0)" } ?? [])
            + (connector?.connections.map { "Connector connection \($0.handle)" } ?? [])
    }
}

extension PeripheralManager {
    /// The entries the manager, its host and its store still keep for a link, named: none
    /// once every link ended.
    var linkLeftovers: [String] {
        let links = self.links.withLock { $0 }
        return host.links.map { "host link \($0.handle)" }
            + links.servers.keys.sorted().map { "server \($0)" }
            + links.indicationsPending.keys.sorted().map { "pending indications \($0)" }
            + links.waitingForRoom.sorted().map { "waiting for room \($0)" }
            + links.restored.sorted().map { "restored \($0)" }
            + store.state.withLock { $0.clients.keys.sorted() }.map { "store client \($0)" }
    }
}
