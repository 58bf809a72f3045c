import ATT
import BareBLE
import BluetoothCore
import Foundation
import HCI
import Testing
import TestSupport

/// BareBLE as peripheral on the virtual radio: Bumble centrals (independent link layers and
/// hosts) connect to our connectable advertising, several at once, each on its own link
/// with its own ATT bearer and MTU; advertising comes back while below the limit.
@Suite(.serialized) struct PeripheralHostLinks {
    @Test("4 centrals connect at once, each with its own link and MTU; a fifth gets in after one leaves")
    func fourCentralsThenAFifth() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        // One attribute at handle 1, served to every link by its own ATT server.
        let store = InMemoryAttributeStore([(ATTAttribute(handle: 1, type: BluetoothUUID(UInt16(0x2A00)), permissions: .readOnly), [0x42])])
        let servers = Lock<[UInt16: ATTServer]>([:])
        let host = try PeripheralHost(central: central, options: try PeripheralRadio.options(name: "BareBLE-Links")) { setup in
            let server = ATTServer(bearer: setup.bearer, store: store, bearerID: setup.handle)
            servers.withLock { $0[setup.handle] = server }
            return server
        }
        let events = HostEvents(host)
        try await host.start()
        let first = try await events.next("advertising") { if case let .advertising(from) = $0 { from } else { nil } }
        #expect(first == DeviceAddress(address, type: .public))

        let mtus = [100, 140, 180, 247]
        var names: [String] = []
        for mtu in mtus { names.append(try await PeripheralRadio.addCentral(mtu: mtu)) }
        // All four at once: each must wait for our advertising to come back after the
        // connection before it (the controller ends connectable advertising at each one).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names {
                group.addTask { try await PeripheralRadio.central(name, "connect \(address)") }
            }
            try await group.waitForAll()
        }
        var links: [DeviceAddress: RemoteCentral] = [:]
        for _ in names {
            let link = try await events.connected()
            links[link.address] = link
        }
        _ = try await events.next("advertising off at the limit") { if case .advertisingStopped = $0 { true } else { nil } }
        #expect(links.count == 4)
        #expect(host.links.count == 4)
        #expect(Set(host.links.map(\.handle)).count == 4)
        #expect(!host.isAdvertising, "at the limit, advertising stays off")

        // Each link has its own bearer: our Exchange MTU gets each central's own answer.
        for (name, mtu) in zip(names, mtus) {
            let link = try #require(links[try PeripheralRadio.address(of: name)])
            #expect(link.connection?.role == .peripheral)
            #expect(try await link.exchangeMTU(517) == UInt16(mtu))
            #expect(link.mtu == UInt16(mtu))
        }
        // A central's request reaches this link's server only (Read Request, handle 1).
        let second = try #require(links[try PeripheralRadio.address(of: names[1])])
        #expect(try await PeripheralRadio.central(names[1], "read 1")["value"] as? String == "42")
        let answered = servers.withLock { $0 }.mapValues(\.statistics.requestsAnswered).filter { $0.value > 0 }
        #expect(answered == [second.handle: 1])

        // One leaves; advertising resumes and a fifth central connects.
        let leaving = try #require(links[try PeripheralRadio.address(of: names[0])])
        try await PeripheralRadio.central(names[0], "disconnect")
        let reason = try await events.next("disconnection") { event -> HCIErrorCode? in
            if case let .disconnected(link, reason) = event, link === leaving { reason } else { nil }
        }
        #expect(reason == .remoteUserTerminatedConnection)
        _ = try await events.next("advertising again") { if case .advertising = $0 { true } else { nil } }
        let fifth = try await PeripheralRadio.addCentral(mtu: 200)
        try await PeripheralRadio.central(fifth, "connect name=BareBLE-Links")
        let joined = try await events.connected()
        #expect(joined.address == (try PeripheralRadio.address(of: fifth)))
        #expect(host.links.count == 4)
        #expect(host.statistics.refusedOverLimit == 0)
        #expect(host.statistics.droppedEvents == 0)
        await host.stop()
    }

    @Test("over the limit: a central that connects through other advertising on the controller is refused with 0x14")
    func overTheLimit() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let host = try PeripheralHost(central: central, options: try PeripheralRadio.options(name: "BareBLE-Full", maximumLinks: 1))
        let events = HostEvents(host)
        try await host.start()
        let first = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(first, "connect name=BareBLE-Full")
        _ = try await events.connected()
        // Someone else's connectable set on the same controller: its connection still
        // reaches the host, which is full.
        let other = Advertiser(controller: central.controller)
        let set = try await other.start(
            AdvertisingParameters(kind: .connectableUndirected, interval: .milliseconds(20), ownAddress: .randomStatic),
            data: AdvertisingData([0x02, 0x01, 0x06]))
        let second = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(second, "connect \(set.address.address) random")
        let refused = try await events.next("refusal") { if case let .refused(address, _) = $0 { address } else { nil } }
        #expect(refused == (try PeripheralRadio.address(of: second)))
        let ended = try await PeripheralRadio.log.get().wait("disconnected") { $0["peer"] as? String == second }
        #expect(ended["reason"] as? Int == 0x14)
        #expect(host.statistics.refusedOverLimit == 1)
        #expect(host.links.count == 1)
    }

    @Test("a hardware error resets the controller: links end, advertising comes back once it is ready")
    func hardwareError() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        let host = try PeripheralHost(central: central, options: try PeripheralRadio.options(name: "BareBLE-Reset"))
        let events = HostEvents(host)
        try await host.start()
        let first = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(first, "connect \(address)")
        let link = try await events.connected()
        let log = try PeripheralRadio.log.get()
        let client = try await log.wait("client") { ($0["address"] as? String) == "\(address)" }
        try await log.control("hardware-error 66 \(try #require(client["id"] as? Int))")
        let reason = try await events.next("the link's end") { event -> HCIErrorCode? in
            if case let .disconnected(ended, reason) = event, ended === link { reason } else { nil }
        }
        #expect(reason == .hardwareFailure)
        _ = try await events.next("advertising after the reset") { if case .advertising = $0 { true } else { nil } }
        let second = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(second, "connect name=BareBLE-Reset")
        #expect(try await events.connected().address == (try PeripheralRadio.address(of: second)))
    }

    @Test("without readvertising, advertising ends at the first connection")
    func noReadvertising() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        var options = try PeripheralRadio.options(name: "BareBLE-Once")
        options.readvertises = false
        let host = try PeripheralHost(central: central, options: options)
        let events = HostEvents(host)
        try await host.start()
        let name = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(name, "connect \(address)")
        let link = try await events.connected()
        _ = try await events.next("advertising off after the connection") { if case .advertisingStopped = $0 { true } else { nil } }
        try await PeripheralRadio.central(name, "disconnect")
        _ = try await events.next("disconnection") { if case .disconnected = $0 { true } else { nil } }
        #expect(!link.isConnected)
        #expect(!host.isAdvertising)
        #expect(host.statistics.advertisingStarts == 1)
    }

    @Test("extended advertising PDUs: a central finds us by name and connects, then another after it")
    func extendedPDUs() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        var options = try PeripheralRadio.options(name: "BareBLE-Extended")
        options.advertising.pduFormat = .extended
        let host = try PeripheralHost(central: central, options: options)
        let events = HostEvents(host)
        try await host.start()
        for _ in 0..<2 {
            let name = try await PeripheralRadio.addCentral()
            try await PeripheralRadio.central(name, "connect name=BareBLE-Extended")
            let link = try await events.connected()
            #expect(link.address == (try PeripheralRadio.address(of: name)))
        }
        _ = try await events.next("advertising after the second connection") { if case .advertising = $0 { true } else { nil } }
        #expect(host.links.count == 2)
        #expect(host.statistics.advertisingStarts == 3)
    }

    @Test("a second PeripheralHost on the same Central is refused; hci-raw-style options are checked")
    func constructionRules() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        let host = try PeripheralHost(central: central, options: try PeripheralRadio.options(name: "BareBLE-One"))
        let events = HostEvents(host)
        #expect(throws: PeripheralHostError.alreadyAccepting) {
            _ = try PeripheralHost(central: central, options: try PeripheralRadio.options(name: "BareBLE-Two"))
        }
        // The refused second host takes nothing away from the first: it still accepts.
        try await host.start()
        let name = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(name, "connect name=BareBLE-One")
        #expect(try await events.connected(timeout: .seconds(5)).address == (try PeripheralRadio.address(of: name)))
        var beacon = try PeripheralRadio.options(name: "BareBLE-Beacon")
        beacon.advertising.kind = .nonConnectableUndirected
        let other = try await PeripheralRadio.open()
        defer { other.close() }
        #expect(throws: PeripheralHostError.self) { _ = try PeripheralHost(central: other, options: beacon) }
        var noLinks = try PeripheralRadio.options(name: "BareBLE-Private")
        noLinks.maximumLinks = 0
        #expect(throws: PeripheralHostError.self) { _ = try PeripheralHost(central: other, options: noLinks) }
    }
}
