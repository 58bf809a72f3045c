import ATT
import BareBLE
import BluetoothCore
import Bonding
import Foundation
import GATT
import HCI
import Testing
import TestSupport

/// ``PeripheralManager`` against Bumble's GATT client in the radio's centrals: discovery of
/// everything equals our database field by field, permissions before and after pairing,
/// long reads, writes reaching the application, notifications and indications, and
/// Service Changed when a service is added.
@Suite(.serialized) struct PeripheralManagerVirtualRadio {
    static let service = BluetoothUUID("B4AE2000-7E57-4BA2-B1E0-00000000C0DE")!
    static let long = BluetoothUUID("B4AE2001-7E57-4BA2-B1E0-00000000C0DE")!
    static let counter = BluetoothUUID("B4AE2002-7E57-4BA2-B1E0-00000000C0DE")!
    static let secret = BluetoothUUID("B4AE2003-7E57-4BA2-B1E0-00000000C0DE")!
    static let computed = BluetoothUUID("B4AE2004-7E57-4BA2-B1E0-00000000C0DE")!
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))
    static let longValue = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }

    /// Our test services: a 300-octet read/write value, a notifying and indicating counter,
    /// a value that needs encryption, a value an application handler computes, and Battery.
    static func services() -> [GATTDatabase.Service] {
        let handler = GATTAttributeHandler(read: { context in Array("bearer \(context.bearer)".utf8) })
        return [
            GATTDatabase.Service(uuid: service, characteristics: [
                .init(uuid: long, properties: [.read, .write, .writeWithoutResponse], value: longValue),
                .init(uuid: counter, properties: [.read, .notify, .indicate], value: [0x00],
                      descriptors: [.init(uuid: GATTUUID.clientCharacteristicConfiguration)]),
                .init(uuid: secret, properties: [.read], value: Array("secret".utf8),
                      permissions: ATTPermissions(read: .init(protection: .encryption))),
                .init(uuid: computed, properties: [.read], handler: handler),
            ]),
            GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
                .init(uuid: batteryLevel, properties: [.read, .notify], value: [87],
                      descriptors: [.init(uuid: GATTUUID.clientCharacteristicConfiguration)]),
            ]),
        ]
    }

    struct Served {
        let central: Central
        let manager: PeripheralManager
        let events: EventReader<PeripheralManagerEvent>
        let name: String
        let link: RemoteCentral
    }

    /// A manager serving `services` (ours by default) and advertising on a fresh exposed
    /// controller, and a new radio central connected to it, with an Exchange MTU of `mtu`
    /// unless nil.
    func serve(
        _ advertisedName: String, pairing: String? = nil, services: [GATTDatabase.Service] = Self.services(), mtu: Int? = 247,
        bonds: Bool = false, handlerDeadline: Duration = GATTServerConfiguration().handlerDeadline
    ) async throws -> Served {
        let central = try await PeripheralRadio.open()
        let address = try #require(central.controller.info?.address)
        if bonds {
            central.security = SecurityPolicy(bonds: try BondStore(directory: PeripheralHostPairing.bondDirectory(), identity: .public(address)))
        }
        let manager = try PeripheralManager(
            central: central, advertising: try PeripheralRadio.options(name: advertisedName), services: services,
            gatt: GATTServerConfiguration(deviceName: advertisedName, handlerDeadline: handlerDeadline))
        let events = EventReader(manager.events())
        try await manager.startAdvertising()
        let name = try await PeripheralRadio.addCentral()
        if let pairing { try await PeripheralRadio.log.get().control("pairing \(name) \(pairing)") }
        let ack = try await PeripheralRadio.central(name, "connect \(address)" + (mtu.map { " mtu=\($0)" } ?? ""))
        if let mtu { #expect(ack["mtu"] as? Int == mtu, "\(ack)") }
        // The link's events and the server's come in no order between them.
        var link: RemoteCentral?, agreed: UInt16?
        while link == nil || (mtu != nil && agreed == nil) {
            let event = try await events.next("connection and MTU") { event -> PeripheralManagerEvent? in
                switch event {
                case .host(.connected), .mtu: event
                default: nil
                }
            }
            switch event {
            case let .host(.connected(connected)): link = connected
            case let .mtu(_, mtu): agreed = mtu
            default: break
            }
        }
        #expect(agreed == mtu.map(UInt16.init))
        return Served(central: central, manager: manager, events: events, name: name, link: try #require(link))
    }

    /// What our store serves at `handle` to the link, as hex, or nil when reading it is
    /// not allowed (Bumble then reports the ATT error).
    static func served(_ manager: PeripheralManager, _ handle: UInt16, bearer: UInt16) async throws -> String {
        let attribute = try #require(manager.store.attribute(at: handle))
        // The link's own context: per-client values (a CCCD) are its bearer's instance's.
        let context = try #require(manager.host.links.first { $0.handle == bearer }?.server?.context, "no link on handle \(bearer)")
        switch await manager.store.read(attribute, context: context) {
        case let .success(value): return Hex.string(value).lowercased()
        case let .failure(code): return "error \(code.rawValue)"
        }
    }

    /// Bumble's `gatt-discovered` against our database: every service, characteristic and
    /// descriptor with its handles, UUID, properties and value, in order. `refused` maps
    /// value handles to the ATT error Bumble must have been answered.
    static func compare(_ discovered: [String: Any], with manager: PeripheralManager, bearer: UInt16, refused: [UInt16: Int]) async throws {
        let theirs = discovered["services"] as? [[String: Any]] ?? []
        let ours = manager.database.services
        #expect(theirs.count == ours.count)
        for (service, found) in zip(ours, theirs) {
            #expect(found["handle"] as? Int == Int(service.handles.lowerBound))
            #expect(found["end"] as? Int == Int(service.handles.upperBound))
            #expect(found["uuid"] as? String == service.uuid.description)
            let characteristics = found["characteristics"] as? [[String: Any]] ?? []
            #expect(characteristics.count == service.characteristics.count, "\(service.uuid)")
            for (characteristic, seen) in zip(service.characteristics, characteristics) {
                #expect(seen["value_handle"] as? Int == Int(characteristic.valueHandle))
                #expect(seen["end"] as? Int == Int(characteristic.endHandle))
                #expect(seen["uuid"] as? String == characteristic.uuid.description)
                #expect(seen["properties"] as? Int == Int(characteristic.properties.rawValue))
                if !characteristic.properties.contains(.read) {
                    #expect(seen["value"] is NSNull || seen["value"] == nil, "\(characteristic.uuid)")
                } else if let code = refused[characteristic.valueHandle] {
                    #expect((seen["value"] as? [String: Any])?["error"] as? Int == code, "\(characteristic.uuid)")
                } else {
                    let expected = try await served(manager, characteristic.valueHandle, bearer: bearer)
                    #expect(seen["value"] as? String == expected, "\(characteristic.uuid)")
                }
                let descriptors = seen["descriptors"] as? [[String: Any]] ?? []
                #expect(descriptors.count == characteristic.descriptors.count, "\(characteristic.uuid)")
                for (descriptor, seenDescriptor) in zip(characteristic.descriptors, descriptors) {
                    #expect(seenDescriptor["handle"] as? Int == Int(descriptor.handle))
                    #expect(seenDescriptor["uuid"] as? String == descriptor.uuid.description)
                    #expect(seenDescriptor["value"] as? String == (try await served(manager, descriptor.handle, bearer: bearer)))
                }
            }
        }
    }

    @Test("Bumble's GATT client discovers our database exactly, is refused the encrypted value until it pairs, reads long values and writes")
    func discoveryAndPermissions() async throws {
        let served = try await serve("BareBLE-PM", pairing: "io=no-input-no-output sc=1 mitm=0 bonding=0")
        defer { served.central.close() }
        let (manager, name, bearer) = (served.manager, served.name, served.link.handle)
        let log = try PeripheralRadio.log.get()

        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let discovered = try await log.wait("gatt-discovered") { $0["peer"] as? String == name }
        let secret = try #require(manager.database.characteristic(Self.secret)).valueHandle
        try await Self.compare(discovered, with: manager, bearer: bearer, refused: [secret: 0x05])
        let long = try #require(manager.database.characteristic(Self.long)).valueHandle
        let computed = try #require(manager.database.characteristic(Self.computed)).valueHandle
        // Independent of our store: what Bumble read is what the application gave.
        let reads = Dictionary(uniqueKeysWithValues: ((discovered["services"] as? [[String: Any]]) ?? [])
            .flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
            .compactMap { c -> (Int, String)? in (c["value"] as? String).map { (c["value_handle"] as? Int ?? 0, $0) } })
        #expect(reads[Int(long)] == Hex.string(Self.longValue).lowercased())
        #expect(reads[Int(computed)] == Hex.string(Array("bearer \(bearer)".utf8)).lowercased())
        #expect(reads[0x0003] == Hex.string(Array("BareBLE-PM".utf8)).lowercased())

        // Pairing raises the link's security in the server: the same read now succeeds.
        let paired = try await PeripheralRadio.central(name, "pair", timeout: .seconds(45))
        #expect(paired["paired"] as? Bool == true, "\(paired)")
        let read = try await PeripheralRadio.central(name, "read \(secret)")
        #expect(read["value"] as? String == Hex.string(Array("secret".utf8)).lowercased(), "\(read)")
        #expect(served.link.linkSecurity.isEncrypted && served.link.linkSecurity.isSecureConnections)

        // A write request reaches the application with its value and replaces the stored one.
        let written = try await PeripheralRadio.central(name, "write \(long) c0ffee")
        #expect(written["written"] as? Bool == true, "\(written)")
        let wrote = try await served.events.next("write") { event -> ([UInt8], Bool)? in
            if case let .wrote(request, value, withResponse) = event, request.valueHandle == long { (value, withResponse) } else { nil }
        }
        #expect(wrote.0 == [0xC0, 0xFF, 0xEE] && wrote.1)
        #expect(try await PeripheralRadio.central(name, "read \(long)")["value"] as? String == "c0ffee")

        // Longer than ATT_MTU - 3: Bumble writes it with Prepare Write Requests and an
        // Execute Write Request; the application sees the whole value once.
        let longer = (0..<400).map { UInt8(truncatingIfNeeded: $0 * 3 + 1) }
        let prepared = try await PeripheralRadio.central(name, "write \(long) \(Hex.string(longer))")
        #expect(prepared["written"] as? Bool == true, "\(prepared)")
        let whole = try await served.events.next("long write") { event -> [UInt8]? in
            if case let .wrote(request, value, _) = event, request.valueHandle == long { value } else { nil }
        }
        #expect(whole == longer)
        #expect(try await PeripheralRadio.central(name, "read \(long)")["value"] as? String == Hex.string(longer).lowercased())
    }

    static let signed = BluetoothUUID("B4AE2005-7E57-4BA2-B1E0-00000000C0DE")!

    /// A value anyone may read, written only by a signed write or over an encrypted link.
    static func signedService() -> [GATTDatabase.Service] {
        [GATTDatabase.Service(uuid: service, characteristics: [
            .init(uuid: signed, properties: [.read, .writeWithoutResponse, .authenticatedSignedWrites], value: [0x00],
                  permissions: ATTPermissions(read: .init(), write: .init(protection: .encryption))),
        ])]
    }

    /// The radio central pairs with a bond (its CSRK among the keys), leaves, and comes back
    /// on a link that is not encrypted. Returns the value handle, as hex for `att`.
    func bondedAndBackUnencrypted(_ advertisedName: String, pairing: String) async throws -> (Served, UInt16) {
        let served = try await serve(advertisedName, pairing: pairing, services: Self.signedService(), mtu: nil, bonds: true)
        let name = served.name
        let paired = try await PeripheralRadio.central(name, "pair", timeout: .seconds(45))
        #expect(paired["paired"] as? Bool == true, "\(paired)")
        let saved = try await served.events.next("bond saved") { event -> Bool? in
            if case let .host(.paired(_, _, saved)) = event { saved } else { nil }
        }
        #expect(saved)
        try await PeripheralRadio.central(name, "disconnect")
        let address = try #require(served.central.controller.info?.address)
        try await PeripheralRadio.central(name, "connect \(address)")
        let again = try await served.events.next("reconnection") { event -> RemoteCentral? in
            if case let .host(.connected(link)) = event { link } else { nil }
        }
        #expect(!again.linkSecurity.isEncrypted)
        let handle = try #require(served.manager.database.characteristic(Self.signed)).valueHandle
        return (Served(central: served.central, manager: served.manager, events: served.events, name: name, link: again), handle)
    }

    @Test("Signed Write Commands on an unencrypted link: the bond's CSRK verifies them, a plain Write Command is refused, a replayed or tampered one is ignored and counted, and the counter survives in the bond")
    func signedWrites() async throws {
        let (served, handle) = try await bondedAndBackUnencrypted("BareBLE-PM-SIGN", pairing: "io=no-input-no-output sc=1 mitm=0 bonding=1")
        defer { served.central.close() }
        let name = served.name
        let server = try #require(served.link.server)
        func read() async throws -> String? { try await PeripheralRadio.central(name, "read \(handle)")["value"] as? String }
        let le = Self.le(handle)

        // Not encrypted: a Write Command needs encryption here, so it is refused in silence.
        try await PeripheralRadio.central(name, "att 52\(le)11")
        #expect(try await read() == "00")
        // Signed with the CSRK the central distributed (Python's AES-CMAC): performed.
        let first = try await PeripheralRadio.central(name, "signed-write \(handle) aa")
        #expect(first["counter"] as? Int == 0)
        #expect(try await read() == "aa")
        let wrote = try await served.events.next("signed write") { event -> ([UInt8], Bool)? in
            if case let .wrote(request, value, withResponse) = event, request.valueHandle == handle { (value, withResponse) } else { nil }
        }
        #expect(wrote.0 == [0xAA] && !wrote.1)
        // The same counter again (a replay), then a bit of the MAC flipped: both ignored.
        try await PeripheralRadio.central(name, "signed-write \(handle) bb counter=0")
        try await PeripheralRadio.central(name, "signed-write \(handle) cc tamper")
        #expect(try await read() == "aa")
        // The next counter is accepted: counters need only increase.
        try await PeripheralRadio.central(name, "signed-write \(handle) dd counter=5")
        #expect(try await read() == "dd")
        let statistics = server.statistics
        #expect(statistics.signedWritesRejected == 2 && statistics.commandsRefused == 1, "\(statistics)")

        // The bond keeps the lowest counter still accepted, in its file.
        let bonds = try #require(served.central.security.bonds)
        let file = try #require(try BondStore.readAll(directory: bonds.directory).first { $0.path == bonds.path }?.contents.get())
        let peer = try PeripheralRadio.address(of: name)
        let key = try #require(BondResolver(bonds: file.bonds).bond(for: peer)?.peerKeys.signatureKey)
        #expect(key.signCounter == 6)
        #expect(key.key != .zero)
        #expect(served.link.isConnected)
    }

    @Test("a central that distributed an all-zero CSRK gets no signed write through: anyone could sign with that key")
    func zeroSigningKeyIsNotTrusted() async throws {
        let (served, handle) = try await bondedAndBackUnencrypted("BareBLE-PM-SIGN0", pairing: "io=no-input-no-output sc=1 mitm=0 bonding=1 csrk=zero")
        defer { served.central.close() }
        try await PeripheralRadio.central(served.name, "signed-write \(handle) aa")
        #expect(try await PeripheralRadio.central(served.name, "read \(handle)")["value"] as? String == "00")
        #expect(try #require(served.link.server).statistics.signedWritesRejected == 1)
    }

    @Test("notifications and indications reach Bumble's subscribed client; Service Changed is indicated when a service is added")
    func valueUpdates() async throws {
        let served = try await serve("BareBLE-PM-N")
        defer { served.central.close() }
        let (manager, name) = (served.manager, served.name)
        let log = try PeripheralRadio.log.get()
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        let counter = try #require(manager.database.characteristic(Self.counter)).valueHandle
        let battery = try #require(manager.database.characteristic(Self.batteryLevel)).valueHandle

        try await PeripheralRadio.central(name, "subscribe \(Self.batteryLevel.description)")
        let subscribed = try await served.events.next("subscription") { event -> ClientCharacteristicConfiguration? in
            if case let .subscribed(request, configuration) = event, request.valueHandle == battery { configuration } else { nil }
        }
        #expect(subscribed == .notification)
        #expect(manager.updateValue([86], for: battery))
        let notified = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == Int(battery) }
        #expect(notified["value"] as? String == "56")

        try await PeripheralRadio.central(name, "subscribe \(Self.counter.uuidString128) indicate")
        _ = try await served.events.next("indication subscription") { event -> Bool? in
            if case let .subscribed(request, configuration) = event, request.valueHandle == counter, configuration == .indication { true } else { nil }
        }
        // One indication is outstanding at a time: the second reaches Bumble only after
        // it confirmed the first.
        #expect(manager.updateValue([0x01], for: counter))
        #expect(manager.updateValue([0x02], for: counter))
        for value in ["01", "02"] {
            let indicated = try await log.wait("notification") { $0["peer"] as? String == name && $0["handle"] as? Int == Int(counter) && $0["value"] as? String == value }
            #expect(indicated["value"] as? String == value)
        }

        // Bumble's client subscribes to Service Changed itself when it discovers it.
        try await PeripheralRadio.central(name, "subscribe 2A05 indicate")
        let added = try manager.add([GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0x181C)), characteristics: [
            .init(uuid: BluetoothUUID(UInt16(0x2A8A)), properties: [.read], value: Array("Ada".utf8)),
        ])])
        let range = try #require(added.first?.handles)
        let changed = try await log.wait("notification") { $0["peer"] as? String == name && $0["uuid"] as? String == "2A05" }
        let bytes = [range.lowerBound, range.upperBound].flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(changed["value"] as? String == Hex.string(bytes).lowercased())
        #expect(manager.statistics.notificationsRefusedFull == 0)
    }
}

extension PeripheralManagerVirtualRadio {
    /// The README's battery example as written there, on the radio instead of hci:0, with
    /// one update instead of a loop.
    @Test("the README's battery service: Bumble reads 100, subscribes and is notified 99")
    func readmeBatteryExample() async throws {
        let central = try await PeripheralRadio.open()
        defer { central.close() }
        var data = AdvertisingDataBuilder()
        data.flags(.generalDiscoverableLEOnly)
        data.localName("Battery")
        data.serviceUUIDs([BluetoothUUID("180F")!])
        let level = GATTDatabase.Characteristic(uuid: BluetoothUUID("2A19")!, properties: [.read, .notify], value: [100])
        let manager = try PeripheralManager(
            central: central, advertising: PeripheralHost.Options(data: try data.build()),
            services: [GATTDatabase.Service(uuid: BluetoothUUID("180F")!, characteristics: [level])])
        try await manager.startAdvertising()
        let handle = manager.database.characteristic(BluetoothUUID("2A19")!)!.valueHandle

        let events = EventReader(manager.events())
        let name = try await PeripheralRadio.addCentral()
        try await PeripheralRadio.central(name, "connect name=Battery")
        #expect(try await PeripheralRadio.central(name, "read \(handle)")["value"] as? String == "64")
        try await PeripheralRadio.central(name, "discover", timeout: .seconds(90))
        try await PeripheralRadio.central(name, "subscribe 2A19")
        _ = try await events.next("subscription") { event -> Bool? in if case .subscribed = event { true } else { nil } }
        #expect(manager.updateValue([99], for: handle))
        let notified = try await PeripheralRadio.log.get().wait("notification") { $0["peer"] as? String == name && $0["uuid"] as? String == "2A19" }
        #expect(notified["value"] as? String == "63")
    }
}

extension PeripheralManagerVirtualRadio {
    /// The ANCS shape: a peripheral that is a GATT client of the central that connected to
    /// it, on the same link, while that central is a client of ours.
    @Test("on one accepted link we are GATT server and client at once: Bumble discovers us while we read its Device Name")
    func serverAndClientOnOneLink() async throws {
        let served = try await serve("BareBLE-PM-C")
        defer { served.central.close() }
        let client = GATTClient(att: served.link.att)
        async let theirs = PeripheralRadio.central(served.name, "discover", timeout: .seconds(90))
        let services = try await client.discoverAllPrimaryServices()
        let gap = try #require(services.first { $0.uuid == BluetoothUUID(UInt16(0x1800)) })
        let name = try #require(try await client.discoverCharacteristics(uuid: GATTUUID.deviceName, in: gap.handles).first)
        let value = try await client.readValue(name.valueHandle)
        #expect(String(decoding: value, as: UTF8.self) == "BareBLE-GATT-Central-\(served.name.dropFirst("central".count))")
        #expect(try await theirs["services"] as? Int == served.manager.database.services.count)
    }
}
