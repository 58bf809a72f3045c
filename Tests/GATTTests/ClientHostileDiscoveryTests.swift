import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// Discovery against servers that answer with well-formed ATT but nonsense GATT: every
/// case ends in `GATTError.invalidResponse` naming what the server did (specs/gatt-client.md,
/// "Discovery rules"), never in a trap or a silently wrong database.
@Suite struct ClientHostileDiscoveryTests {
    /// Runs `body` and returns the text of its `invalidResponse`, recording anything else.
    func invalidResponse<T>(_ body: () async throws(GATTError) -> T) async -> String? {
        let error = await gattError(body)
        guard case .invalidResponse(let why) = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return nil
        }
        return why
    }

    // MARK: Services

    @Test func servicesOutOfOrderInOneResponse() async throws {
        let (client, bearer) = makeGATT([
            step("10 01 00 FF FF 00 28", "11 06 0C 00 11 00 0D 18 01 00 05 00 00 18"),
            step("10 12 00 FF FF 00 28", "01 10 12 00 0A"),
        ], timeout: .seconds(5))
        let why = await invalidResponse { () async throws(GATTError) in try await client.discoverServices(in: 0x0001...0xFFFF) }
        #expect(why?.contains("0x0001") == true)
        #expect(bearer.sent.count == 1)
    }

    @Test func overlappingAndDuplicateServices() async throws {
        for answer in [
            "11 06 01 00 08 00 00 18 05 00 0B 00 01 18",  // 0x0005 lies inside 0x0001...0x0008
            "11 06 01 00 05 00 00 18 01 00 05 00 00 18",  // the same service twice
        ] {
            let (client, bearer) = makeGATT([step("10 01 00 FF FF 00 28", answer), step("10 0C 00 FF FF 00 28", "01 10 0C 00 0A")], timeout: .seconds(5))
            _ = await invalidResponse { () async throws(GATTError) in try await client.discoverAllPrimaryServices() }
            #expect(bearer.sent.count == 1)
        }
    }

    @Test func servicesByUUIDOutOfOrder() async throws {
        let (client, _) = makeGATT([step("06 01 00 FF FF 00 28 0D 18", "07 0C 00 11 00 01 00 05 00")], timeout: .seconds(5))
        _ = await invalidResponse { () async throws(GATTError) in try await client.discoverPrimaryServices(uuid: GATTUUID.heartRate) }
    }

    @Test func aRangeFromHandleZeroIsRefusedBeforeAnythingIsSent() async throws {
        // Handle 0x0000 is reserved (Vol 3 Part F 3.2.2); a declaration there would make
        // the end handle of the one before it 0x0000 - 1.
        let (client, bearer) = makeGATT([
            step("08 00 00 05 00 03 28", "09 07 02 00 02 03 00 00 2A 00 00 02 01 00 01 2A"),
            step("08 04 00 05 00 03 28", "01 08 04 00 0A"),
        ], timeout: .seconds(5))
        let error = await gattError { () async throws(GATTError) in try await client.discoverAllCharacteristics(in: 0x0000...0x0005) }
        guard case .invalidRequest = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(bearer.sent.isEmpty)
    }

    // MARK: Characteristics

    @Test func characteristicDeclarationsOutOfOrder() async throws {
        let (client, _) = makeGATT([
            step("08 0C 00 14 00 03 28", "09 07 10 00 02 11 00 38 2A 0D 00 10 0E 00 37 2A"),
            step("08 12 00 14 00 03 28", "01 08 12 00 0A"),
        ], timeout: .seconds(5))
        let why = await invalidResponse { () async throws(GATTError) in try await client.discoverAllCharacteristics(in: 0x000C...0x0014) }
        #expect(why?.contains("0x000D") == true)
    }

    @Test(arguments: [
        "09 07 0D 00 10 0C 00 37 2A",  // the value before its declaration
        "09 07 0D 00 10 0D 00 37 2A",  // the value at its declaration
        "09 07 0D 00 10 10 00 37 2A",  // a gap between declaration and value (Part G 3.3: immediately after)
        "09 07 0D 00 10 15 00 37 2A",  // the value past the range asked for
        "09 07 14 00 10 15 00 37 2A",  // a declaration at the range's end has no room for its value
    ])
    func valueHandlesThatDoNotFollowTheirDeclaration(_ answer: String) async throws {
        let (client, _) = makeGATT([step("08 0C 00 14 00 03 28", answer)], timeout: .seconds(5))
        _ = await invalidResponse { () async throws(GATTError) in try await client.discoverAllCharacteristics(in: 0x000C...0x0014) }
    }

    /// Services 0x0001-0x0005 and 0x0006-0x000B, asked for once each way.
    static let twoServices = [
        step("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 06 00 0B 00 01 18"),
        step("10 0C 00 FF FF 00 28", "01 10 0C 00 0A"),
    ]

    @Test func aCharacteristicWhoseValueLeavesItsService() async throws {
        // 0x0005 is the last handle of Generic Access; its value would sit in the next service.
        let (client, _) = makeGATT(Self.twoServices + [
            step("08 01 00 0B 00 02 28", "01 08 01 00 0A"),
            step("08 01 00 0B 00 03 28", "09 07 05 00 02 06 00 00 2A"),
            step("08 07 00 0B 00 03 28", "01 08 07 00 0A"),
        ], timeout: .seconds(5))
        let why = await invalidResponse { () async throws(GATTError) in try await client.discoverServices(in: 0x0001...0xFFFF) }
        #expect(why?.contains("0x0005") == true)
    }

    @Test func aCharacteristicOutsideEveryService() async throws {
        // Services 0x0001-0x0005 and 0x0010-0x0015; a declaration at 0x0008 belongs to neither.
        let (client, _) = makeGATT([
            step("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 10 00 15 00 01 18"),
            step("10 16 00 FF FF 00 28", "01 10 16 00 0A"),
            step("08 01 00 15 00 02 28", "01 08 01 00 0A"),
            step("08 01 00 15 00 03 28", "09 07 08 00 02 09 00 00 2A"),
            step("08 0A 00 15 00 03 28", "01 08 0A 00 0A"),
        ], timeout: .seconds(5))
        let why = await invalidResponse { () async throws(GATTError) in try await client.discoverServices(in: 0x0001...0xFFFF) }
        #expect(why?.contains("0x0008") == true)
    }

    // MARK: Includes

    @Test(arguments: [
        "09 08 02 00 04 00 08 00 0F 18",  // a target straddling both services
        "09 08 02 00 01 00 05 00 00 18",  // Generic Access including itself
        "09 08 02 00 06 00 0B 00 0F 18",  // names Generic Attribute with another UUID
        "09 08 07 00 20 00 30 00 0F 18",  // control: a secondary service beyond the primaries is legal
    ])
    func includesPointingAtNonsense(_ answer: String) async throws {
        let legal = answer.hasPrefix("09 08 07 00 20 00")
        let (client, _) = makeGATT(Self.twoServices + [
            step("08 01 00 0B 00 02 28", answer),
            step(answer.hasPrefix("09 08 07") ? "08 08 00 0B 00 02 28" : "08 03 00 0B 00 02 28", "01 08 03 00 0A"),
            step(legal ? "08 01 00 30 00 03 28" : "08 01 00 0B 00 03 28", "01 08 01 00 0A"),
        ], timeout: .seconds(5))
        if legal {
            let services = try await client.discoverServices(in: 0x0001...0xFFFF)
            #expect(services.map(\.handles) == [0x0001...0x0005, 0x0006...0x000B, 0x0020...0x0030])
        } else {
            _ = await invalidResponse { () async throws(GATTError) in try await client.discoverServices(in: 0x0001...0xFFFF) }
        }
    }

    @Test func anIncludeAfterACharacteristicOfItsService() async throws {
        // Part G 3.1: includes come right after the service declaration, before any
        // characteristic; one further down would be read as that characteristic's descriptor.
        let (client, _) = makeGATT(Self.twoServices + [
            step("08 01 00 0B 00 02 28", "09 08 04 00 20 00 30 00 0F 18"),
            step("08 05 00 0B 00 02 28", "01 08 05 00 0A"),
            step("08 01 00 30 00 03 28", "09 07 02 00 02 03 00 00 2A"),
            step("08 04 00 30 00 03 28", "01 08 04 00 0A"),
            step("04 04 00 05 00", "05 01 04 00 02 28"),
            step("04 05 00 05 00", "01 04 05 00 0A"),
        ], timeout: .seconds(5))
        let why = await invalidResponse { () async throws(GATTError) in try await client.discoverServices(in: 0x0001...0xFFFF) }
        #expect(why?.contains("0x0004") == true)
    }

    // MARK: Descriptors

    static let measurement = GATTDatabase.Characteristic(
        handle: 0x000D, properties: .notify, valueHandle: 0x000E, uuid: GATTUUID.heartRateMeasurement, endHandle: 0x0014)

    @Test(arguments: [
        "05 01 11 00 02 29 0F 00 01 29",  // out of order
        "05 01 0F 00 02 29 0F 00 01 29",  // the same handle twice
        "05 01 0F 00 02 29 10 00 03 28",  // a characteristic declaration inside a characteristic
        "05 01 0E 00 02 29",  // the value itself
    ])
    func descriptorsOutOfOrderOrNotDescriptors(_ answer: String) async throws {
        let (client, _) = makeGATT([step("04 0F 00 14 00", answer)], timeout: .seconds(5))
        _ = await invalidResponse { () async throws(GATTError) in try await client.discoverAllDescriptors(of: Self.measurement) }
    }

    // MARK: Database Hash

    @Test func aDatabaseHashThatIsNot128BitsIsAnInvalidResponse() async throws {
        // Part G 7.3: the hash is 16 bytes; a shorter one could never be kept or compared.
        let (client, _) = makeGATT([step("08 01 00 FF FF 2A 2B", "09 05 0B 00 01 02 03")], timeout: .seconds(5))
        let why = await invalidResponse { () async throws(GATTError) in try await client.discover() }
        #expect(why?.contains("Database Hash") == true)
    }
}
