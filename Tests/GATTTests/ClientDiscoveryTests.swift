import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// Discovery procedures (Core 5.4 Vol 3 Part G 4.4 to 4.7) as scripted conversations.
@Suite struct ClientDiscoveryTests {
    @Test func discoverAllPrimaryServicesEndsOnAttributeNotFound() async throws {
        let (client, bearer) = makeGATT([
            step("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 06 00 09 00 01 18"),
            step("10 0A 00 FF FF 00 28", "11 14 0A 00 20 00 \(bytesHex(16))"),
            step("10 21 00 FF FF 00 28", "01 10 21 00 0A"),
        ])
        let services = try await client.discoverAllPrimaryServices()
        #expect(services.map(\.handles) == [0x0001...0x0005, 0x0006...0x0009, 0x000A...0x0020])
        #expect(services[2].uuid == (try BluetoothUUID(littleEndian: Hex.bytes(bytesHex(16))!)))
        #expect(bearer.failures.isEmpty)
        #expect(bearer.scriptFinished)
    }

    @Test func discoverAllPrimaryServicesStopsAtHandleFFFFWithoutAskingAgain() async throws {
        let (client, bearer) = makeGATT([
            step("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 06 00 FF FF 0D 18"),
        ])
        #expect(try await client.discoverAllPrimaryServices().count == 2)
        #expect(bearer.sent.count == 1)
        #expect(bearer.failures.isEmpty)
    }

    @Test func discoverAllPrimaryServicesRejectsAServerThatDoesNotAdvance() async throws {
        let (client, _) = makeGATT([
            step("10 06 00 FF FF 00 28", "11 06 01 00 05 00 00 18"),
        ])
        let error = await gattError { () async throws(GATTError) in try await client.discoverAllPrimaryServices(in: 0x0006...0xFFFF) }
        guard case .invalidResponse = error else { Issue.record("\(String(describing: error))"); return }
    }

    @Test func discoverPrimaryServiceByServiceUUID() async throws {
        let (client, bearer) = makeGATT([
            step("06 01 00 FF FF 00 28 0D 18", "07 0C 00 11 00"),
            step("06 12 00 FF FF 00 28 0D 18", "01 06 12 00 0A"),
        ])
        let services = try await client.discoverPrimaryServices(uuid: GATTUUID.heartRate)
        #expect(services == [.init(uuid: GATTUUID.heartRate, handles: 0x000C...0x0011)])
        #expect(bearer.failures.isEmpty)
        #expect(bearer.scriptFinished)
    }

    @Test func findIncludedServicesReadsThe128BitUUIDOfAnIncludeWithoutOne() async throws {
        let uuid128 = bytesHex(16, from: 0xA0)
        let (client, bearer) = makeGATT([
            // A 16-bit include (value: start, end, UUID)...
            step("08 01 00 10 00 02 28", "09 08 02 00 05 00 08 00 0F 18"),
            // ...a 128-bit include (start, end only), whose declaration is read...
            step("08 03 00 10 00 02 28", "09 06 03 00 09 00 0C 00"),
            step("0A 09 00", "0B \(uuid128)"),
            step("08 04 00 10 00 02 28", "01 08 04 00 0A"),
        ])
        let includes = try await client.findIncludedServices(in: 0x0001...0x0010)
        #expect(includes == [
            .init(handle: 0x0002, serviceHandles: 0x0005...0x0008, uuid: GATTUUID.battery),
            .init(handle: 0x0003, serviceHandles: 0x0009...0x000C, uuid: try BluetoothUUID(littleEndian: Hex.bytes(uuid128)!)),
        ])
        #expect(bearer.failures.isEmpty)
        #expect(bearer.scriptFinished)
    }

    @Test func discoverAllCharacteristicsOfAServiceAndByUUID() async throws {
        let script = [
            step("08 0C 00 14 00 03 28", "09 07 0D 00 10 0E 00 37 2A 10 00 02 11 00 38 2A"),
            step("08 12 00 14 00 03 28", "09 15 12 00 08 13 00 \(bytesHex(16))"),
            step("08 14 00 14 00 03 28", "01 08 14 00 0A"),
        ]
        let (client, bearer) = makeGATT(script)
        let all = try await client.discoverAllCharacteristics(in: 0x000C...0x0014)
        #expect(all.map(\.handle) == [0x000D, 0x0010, 0x0012])
        #expect(all.map(\.endHandle) == [0x000F, 0x0011, 0x0014])
        #expect(all[2].properties == .write)
        #expect(bearer.scriptFinished)
        let (byUUID, second) = makeGATT(script)
        #expect(try await byUUID.discoverCharacteristics(uuid: GATTUUID.bodySensorLocation, in: 0x000C...0x0014).map(\.valueHandle) == [0x0011])
        #expect(second.failures.isEmpty && bearer.failures.isEmpty)
    }

    @Test func discoverAllCharacteristicDescriptorsBetweenValueAndEnd() async throws {
        let (client, bearer) = makeGATT([
            step("04 0F 00 14 00", "05 01 0F 00 02 29 10 00 01 29"),
            step("04 11 00 14 00", "05 02 11 00 \(bytesHex(16))"),
            step("04 12 00 14 00", "01 04 12 00 0A"),
        ])
        let characteristic = GATTDatabase.Characteristic(
            handle: 0x000D, properties: .notify, valueHandle: 0x000E, uuid: GATTUUID.heartRateMeasurement, endHandle: 0x0014)
        let descriptors = try await client.discoverAllDescriptors(of: characteristic)
        #expect(descriptors.map(\.handle) == [0x000F, 0x0010, 0x0011])
        #expect(descriptors[0].uuid == GATTUUID.clientCharacteristicConfiguration)
        // A characteristic whose value is its last attribute costs no request.
        let none = try await client.discoverAllDescriptors(of: .init(
            handle: 0x0002, properties: .read, valueHandle: 0x0003, uuid: GATTUUID.deviceName, endHandle: 0x0003))
        #expect(none.isEmpty)
        #expect(bearer.sent.count == 3)
        #expect(bearer.failures.isEmpty)
    }

    @Test func discoverTheWholeDatabaseInSevenRoundTripsAtMTU23() async throws {
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [SampleServer.subscribeServiceChanged])
        let database = try await client.discover()
        #expect(database == SampleServer.database)
        #expect(bearer.sent.filter(isDiscoveryRequest).count == 7)
        #expect(bearer.failures.isEmpty)
        #expect(bearer.scriptFinished)
    }

    /// The hash is read before the first discovery: if the database changes while it is
    /// discovered, the copy keeps the older hash, which the next connection finds changed.
    /// Read after (as before), the newer hash would vouch for a copy that mixes both.
    @Test func theFirstDiscoveryKeepsTheHashReadBeforeIt() async throws {
        // The server's hash is `hash` when asked first; its database changes during the
        // discovery (the script cannot show it, only the order that makes it harmless).
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [SampleServer.subscribeServiceChanged])
        let database = try await client.discover()
        #expect(bearer.sent.first == Hex.bytes("08 01 00 FF FF 2A 2B"))
        #expect(database.databaseHash == Hex.bytes(SampleServer.hash))
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    /// A server that refuses the hash read before the discovery (it has none: Attribute Not
    /// Found; or it wants encryption for it) is discovered all the same, with no hash kept.
    @Test func aServerThatRefusesTheHashIsDiscoveredWithoutOne() async throws {
        for code in ["0A", "0F"] {
            let (client, bearer) = makeGATT([step("08 01 00 FF FF 2A 2B", "01 08 01 00 \(code)")] + SampleServer.discovery + [SampleServer.subscribeServiceChanged])
            let database = try await client.discover()
            #expect(database.databaseHash == nil)
            #expect(database.services == SampleServer.database.services)
            #expect(bearer.failures.isEmpty && bearer.scriptFinished)
        }
    }
}
