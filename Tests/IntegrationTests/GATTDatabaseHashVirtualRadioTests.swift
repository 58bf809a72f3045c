import BareBLE
import BluetoothCore
import GATT
import Testing
import TestSupport

/// Our Database Hash (Core 5.4 Vol 3 Part G 7.3.1) against Bumble's: the hash we compute
/// from what our client discovered equals the one Bumble's GATT server computes and serves
/// (`bumble.profiles.gatt_service.GenericAttributeProfileService.get_database_hash`), before
/// and after the peer adds a service that has an Extended Properties descriptor.
@Suite(.serialized) struct GATTDatabaseHashVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral"]) }
    static let peripheral = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)

    /// What a server would declare to get `database`: no handles, includes by UUID, and no
    /// CCCDs, which both Bumble and our layout add last to a characteristic that can
    /// notify or indicate.
    static func declarations(of database: GATTDatabase) -> [GATTDatabase.Service] {
        database.services.map { service in
            GATTDatabase.Service(
                uuid: service.uuid, isPrimary: service.isPrimary,
                includes: service.includes.map { GATTDatabase.IncludedService(uuid: $0.uuid) },
                characteristics: service.characteristics.map { characteristic in
                    GATTDatabase.Characteristic(
                        uuid: characteristic.uuid, properties: characteristic.properties,
                        descriptors: characteristic.descriptors
                            .filter { $0.uuid != GATTUUID.clientCharacteristicConfiguration }
                            .map { GATTDatabase.Descriptor(uuid: $0.uuid, value: $0.value) }
                    )
                }
            )
        }
    }

    @Test func theHashOfWhatWeDiscoveredIsTheOneBumbleServes() async throws {
        let harness = try Self.harness.get()
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort))
        defer { central.close() }
        try await central.powerOn()
        let peripheral = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        let before = try await peripheral.discoverServices()

        // The HRM's database: includes (16- and 128-bit), a secondary service, 128-bit
        // characteristics, User Descriptions, a Presentation Format, CCCDs.
        let discovered = try #require(peripheral.database)
        let served = try #require(discovered.databaseHash)
        #expect(discovered.descriptorsUnknownToHash.isEmpty)
        #expect(discovered.computedHash == served, "ours \(discovered.computedHash.map { Hex.string($0) } ?? "nil"), Bumble's \(Hex.string(served))")
        // Bumble's layout is a reference for ours: the same declarations give the same handles.
        #expect(try GATTDatabase.laidOut(from: Self.declarations(of: discovered)).services == discovered.services)

        try await harness.waitForEvent("subscription") { $0["characteristic"] as? String == "2A05" && $0["cccd"] as? String == "indicate" }
        let changes = peripheral.serviceChanges
        try await harness.control("add-service peripheral")
        let services = try await withDeadline("the service change", seconds: 10) {
            var iterator = changes.makeAsyncIterator()
            return await iterator.next()
        }
        #expect((services ?? nil)?.count == before.count + 1)

        // The added Temperature has an Extended Properties descriptor: its value is covered
        // by the hash, so it is unknown until read.
        var changed = try #require(peripheral.database)
        let unknown = changed.descriptorsUnknownToHash
        #expect(unknown.count == 1)
        #expect(changed.computedHash == nil)
        for handle in unknown {
            let descriptor = try #require(peripheral.descriptor(handle: handle))
            let value = try await peripheral.readValue(for: descriptor)
            #expect(value == [0x01, 0x00])
            changed.setDescriptorValue(value, at: handle)
        }
        let newHash = try #require(changed.databaseHash)
        #expect(newHash != served)
        #expect(changed.computedHash == newHash, "ours \(changed.computedHash.map { Hex.string($0) } ?? "nil"), Bumble's \(Hex.string(newHash))")
        #expect(try GATTDatabase.laidOut(from: Self.declarations(of: changed)).services == changed.services)
        try await peripheral.disconnect()
    }
}
