import ATT
import BluetoothCore
import GATT
import Testing

/// The GATT server's store (Sources/GATT/Server), called the way the ATT server calls it.
@Suite struct ServerStoreTests {
    static let testService = BluetoothUUID(UInt16(0xFFF0))
    static let stored = BluetoothUUID(UInt16(0xFFF1))
    static let notifying = BluetoothUUID(UInt16(0xFFF2))
    static let produced = BluetoothUUID(UInt16(0xFFF3))

    /// A bearer's context; a later bearer given the same number takes a larger `instance`.
    static func context(_ bearer: UInt16, instance: UInt64 = 1) -> ATTServerContext { ATTServerContext(bearer: bearer, instance: instance) }

    /// GAP (1-5), GATT (6-15, with Server Supported Features because the configuration sets
    /// a feature), then a test service from 16: stored read/write value, a notify+indicate
    /// value with a User Description (CCCD added), a handler's value.
    static func makeStore(handler: GATTAttributeHandler? = nil) throws -> GATTServerStore {
        try GATTServerStore(services: [
            GATTDatabase.Service(uuid: testService, characteristics: [
                GATTDatabase.Characteristic(uuid: stored, properties: [.read, .write, .writeWithoutResponse], value: [1, 2, 3]),
                GATTDatabase.Characteristic(uuid: notifying, properties: [.read, .notify, .indicate], value: [0], descriptors: [
                    GATTDatabase.Descriptor(uuid: GATTUUID.characteristicUserDescription, value: Array("Level".utf8)),
                ]),
                GATTDatabase.Characteristic(uuid: produced, properties: [.read, .write], handler: handler),
            ]),
        ], configuration: GATTServerConfiguration(
            deviceName: "Test", appearance: 0x0341, serverSupportedFeatures: .enhancedATTBearer, handlerDeadline: .seconds(60)))
    }

    func read(_ store: GATTServerStore, _ handle: UInt16, bearer: UInt16 = 1, instance: UInt64 = 1) async throws -> Result<[UInt8], ATTErrorCode> {
        let attribute = try #require(store.attribute(at: handle))
        return await store.read(attribute, context: Self.context(bearer, instance: instance))
    }

    func write(_ store: GATTServerStore, _ handle: UInt16, _ value: [UInt8], bearer: UInt16 = 1, instance: UInt64 = 1) async throws -> ATTErrorCode? {
        let attribute = try #require(store.attribute(at: handle))
        return await store.write(attribute, value: value, kind: .request, context: Self.context(bearer, instance: instance))
    }

    /// The layout as a table of (handle, type, group end), the way the ATT server lists it.
    @Test func layoutOfTheSampleDatabase() throws {
        let store = try Self.makeStore()
        let listed = store.attributes(in: 0x0001...0xFFFF, limit: 100).map { "\(hex($0.handle)) \($0.type) \($0.groupEnd.map(hex) ?? "-")" }
        #expect(listed == [
            "0001 2800 0005", "0002 2803 -", "0003 2A00 -", "0004 2803 -", "0005 2A01 -",
            "0006 2800 000F", "0007 2803 -", "0008 2A05 -", "0009 2902 -", "000A 2803 -", "000B 2B29 -",
            "000C 2803 -", "000D 2B2A -", "000E 2803 -", "000F 2B3A -",
            "0010 2800 0018", "0011 2803 -", "0012 FFF1 -", "0013 2803 -", "0014 FFF2 -", "0015 2901 -",
            "0016 2902 -", "0017 2803 -", "0018 FFF3 -",
        ])
        #expect(store.attributes(in: 0x0012...0x0014, limit: 2).map(\.handle) == [0x0012, 0x0013])
        #expect(store.attributes(in: 0x0019...0xFFFF, limit: 10).isEmpty)
        #expect(store.attributes(in: 0x0001...0xFFFF, limit: 0).isEmpty)
        #expect(store.attribute(at: 0x0000) == nil)
        #expect(store.attribute(at: 0xFFFF) == nil)
        // Permissions follow the properties: Service Changed cannot be read or written.
        #expect(store.attribute(at: 0x0008)?.permissions == ATTPermissions())
        #expect(store.attribute(at: 0x0012)?.permissions == .readWrite)
        #expect(store.attribute(at: 0x000D)?.permissions == .readOnly)
    }

    @Test func declarationsAndBuiltInValues() async throws {
        let store = try Self.makeStore()
        #expect(try await read(store, 0x0001) == .success([0x00, 0x18]))
        #expect(try await read(store, 0x0013) == .success([0x32, 0x14, 0x00, 0xF2, 0xFF]))
        #expect(try await read(store, 0x0003) == .success(Array("Test".utf8)))
        #expect(try await read(store, 0x0005) == .success([0x41, 0x03]))
        #expect(try await read(store, 0x000F) == .success([0x01]))
        #expect(try await read(store, 0x000D) == .success(store.databaseHash))
        #expect(store.databaseHash == store.database.computedHash)
        #expect(try await read(store, 0x0008) == .failure(.readNotPermitted))
        #expect(try await write(store, 0x0001, [0x01, 0x18]) == .writeNotPermitted)
        #expect(try await write(store, 0x000D, Array(repeating: 0, count: 16)) == .writeNotPermitted)
    }

    @Test func storedValuesAreWrittenAndReadBack() async throws {
        let store = try Self.makeStore()
        #expect(try await read(store, 0x0012) == .success([1, 2, 3]))
        #expect(try await write(store, 0x0012, [9]) == nil)
        #expect(try await read(store, 0x0012, bearer: 2) == .success([9]))
        #expect(try await read(store, 0x0015) == .success(Array("Level".utf8)))
        // The application sets values too, within 512 octets, only where values are stored.
        #expect(store.setValue([4, 5], at: 0x0012))
        #expect(try await read(store, 0x0012) == .success([4, 5]))
        #expect(store.setValue(Array("Lvl".utf8), at: 0x0015))
        #expect(!store.setValue([0], at: 0x0013), "a declaration")
        #expect(!store.setValue([0, 0], at: 0x0016), "a CCCD is per client")
        #expect(!store.setValue([0], at: 0x0019), "no attribute")
        #expect(!store.setValue(Array(repeating: 0, count: 513), at: 0x0012))
        #expect(try await read(store, 0x0012) == .success([4, 5]))
        // A value write never changes the hash.
        let hash = store.databaseHash
        #expect(try await write(store, 0x0012, Array(repeating: 7, count: 512)) == nil)
        #expect(store.databaseHash == hash)
    }

    @Test func handlersProduceAndConsumeValues() async throws {
        let written = Lock<[[UInt8]]>([])
        let handler = GATTAttributeHandler(
            read: { context throws(ATTErrorCode) in
                guard context.bearer == 1 else { throw .insufficientAuthorization }
                return [0xAB, UInt8(context.bearer)]
            },
            write: { value, _ throws(ATTErrorCode) in
                guard value.count == 1 else { throw ATTErrorCode(rawValue: 0x80) }
                written.withLock { $0.append(value) }
            }
        )
        let store = try Self.makeStore(handler: handler)
        #expect(try await read(store, 0x0018) == .success([0xAB, 0x01]))
        #expect(try await read(store, 0x0018, bearer: 2) == .failure(.insufficientAuthorization))
        #expect(try await write(store, 0x0018, [5]) == nil)
        #expect(try await write(store, 0x0018, [5, 6]) == ATTErrorCode(rawValue: 0x80))
        #expect(written.withLock { $0 } == [[5]])
    }

    /// A handler's value past 512 octets is an error, never a silent truncation.
    @Test func anOversizedHandlerValueIsUnlikelyError() async throws {
        let store = try Self.makeStore(handler: GATTAttributeHandler(read: { _ throws(ATTErrorCode) in Array(repeating: 1, count: 513) }))
        #expect(try await read(store, 0x0018) == .failure(.unlikelyError))
    }

    @Test func cccdsArePerBearerAndChecked() async throws {
        let store = try Self.makeStore()
        #expect(try await read(store, 0x0016) == .success([0x00, 0x00]))
        #expect(try await write(store, 0x0016, [0x01]) == .invalidAttributeValueLength)
        #expect(try await write(store, 0x0016, [0x01, 0x00, 0x00]) == .invalidAttributeValueLength)
        #expect(try await write(store, 0x0016, []) == .invalidAttributeValueLength)
        #expect(try await write(store, 0x0016, [0x03, 0x00]) == nil)
        #expect(try await read(store, 0x0016) == .success([0x03, 0x00]))
        #expect(try await read(store, 0x0016, bearer: 2) == .success([0x00, 0x00]))
        #expect(store.subscribers(of: 0x0014) == [1: [.notification, .indication]])
        // Reserved bits are not kept.
        #expect(try await write(store, 0x0016, [0x05, 0xF0], bearer: 2) == nil)
        #expect(try await read(store, 0x0016, bearer: 2) == .success([0x01, 0x00]))
        // Service Changed only indicates: notifications there are not allowed.
        #expect(try await write(store, 0x0009, [0x01, 0x00]) == .valueNotAllowed)
        #expect(try await write(store, 0x0009, [0x02, 0x00]) == nil)
        #expect(try await write(store, 0x0016, [0x00, 0x00]) == nil)
        #expect(store.subscribers(of: 0x0014) == [2: [.notification]])
        store.bearerClosed(Self.context(2))
        #expect(store.subscribers(of: 0x0014).isEmpty)
        #expect(try await read(store, 0x0016, bearer: 2) == .success([0x00, 0x00]))
    }

    /// `recipients(of:)` keeps its answer per value handle between calls: every change of a
    /// client's state (a CCCD written, cleared, a bearer closed) is seen by the next call.
    @Test func recipientsFollowEveryClientChange() async throws {
        let store = try Self.makeStore()
        func recipients() -> [GATTRecipients.Subscriber] { store.recipients(of: 0x0014).subscribers }
        #expect(recipients().isEmpty)
        #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: 2) == nil)
        #expect(recipients() == [GATTRecipients.Subscriber(bearer: 2, configuration: .notification)])
        #expect(try await write(store, 0x0016, [0x02, 0x00], bearer: 1) == nil)
        #expect(recipients() == [
            GATTRecipients.Subscriber(bearer: 1, configuration: .indication),
            GATTRecipients.Subscriber(bearer: 2, configuration: .notification),
        ])
        #expect(try await write(store, 0x0016, [0x00, 0x00], bearer: 1) == nil)
        #expect(recipients().map(\.bearer) == [2])
        store.bearerClosed(Self.context(2))
        #expect(recipients().isEmpty)
    }

    @Test func clientSupportedFeaturesCannotBeCleared() async throws {
        let store = try Self.makeStore()
        #expect(try await read(store, 0x000B) == .success([0x00]))
        #expect(try await write(store, 0x000B, []) == .invalidAttributeValueLength)
        #expect(try await write(store, 0x000B, [0x01]) == nil)
        #expect(try await write(store, 0x000B, [0x00]) == .valueNotAllowed)
        #expect(try await write(store, 0x000B, [0x02]) == .valueNotAllowed)
        #expect(try await write(store, 0x000B, [0xFF, 0xFF]) == nil)
        #expect(try await read(store, 0x000B) == .success([0x07]))
        #expect(try await read(store, 0x000B, bearer: 2) == .success([0x00]))
    }

    func declaredBattery() -> GATTDatabase.Service {
        GATTDatabase.Service(uuid: GATTUUID.battery, characteristics: [
            GATTDatabase.Characteristic(uuid: GATTUUID.batteryLevel, properties: [.read, .notify], value: [50]),
        ])
    }

    @Test func addingAndRemovingServicesReportsTheRangeAndTheSubscribers() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x0009, [0x02, 0x00], bearer: 1) == nil)
        #expect(try await write(store, 0x0009, [0x00, 0x00], bearer: 2) == nil)
        #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: 2) == nil)
        let hash = store.databaseHash

        let added = try #require(try store.addServices([declaredBattery()]))
        #expect(added.changedHandles == 0x0019...0x001C)
        #expect(added.serviceChangedHandle == 0x0008)
        #expect(added.subscribers == [1])
        #expect(added.serviceChangedValue == [0x19, 0x00, 0x1C, 0x00])
        #expect(store.databaseHash != hash)
        #expect(store.databaseHash == store.database.computedHash)
        #expect(try await read(store, 0x001B) == .success([50]))
        #expect(try store.addServices([]) == nil)

        let removed = try store.removeService(at: 0x0010)
        #expect(removed.changedHandles == 0x0010...0x0018)
        #expect(store.attributes(in: 0x0010...0x0018, limit: 10).isEmpty)
        #expect(store.subscribers(of: 0x0014).isEmpty, "the removed characteristic's CCCD is forgotten")
        #expect(try await read(store, 0x001B) == .success([50]))
        #expect(throws: GATTLayoutError.noSuchService(0x0010)) { try store.removeService(at: 0x0010) }
        #expect(throws: GATTLayoutError.builtInService(0x0006)) { try store.removeService(at: 0x0006) }
        #expect(throws: GATTLayoutError.builtInService(0x0001)) { try store.removeService(at: 0x0001) }
        #expect(store.attribute(at: 0x000D)?.type == GATTUUID.databaseHash)
    }

    /// Of two services with one UUID, an include that gives handles takes that one.
    @Test func anIncludeWithHandlesPicksAmongServicesWithOneUUID() throws {
        let store = try Self.makeStore()
        _ = try store.addServices([declaredBattery(), declaredBattery()])
        _ = try store.addServices([GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFE0)), includes: [
            .init(uuid: GATTUUID.battery),
            .init(handle: 0, serviceHandles: 0x001D...0x0020, uuid: GATTUUID.battery),
        ])])
        #expect(store.database.services.last?.includes.map(\.serviceHandles) == [0x0019...0x001C, 0x001D...0x0020])
        #expect(throws: GATTLayoutError.includedServiceMissing(GATTUUID.battery)) {
            try store.addServices([GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFE1)), includes: [
                .init(handle: 0, serviceHandles: 0x001A...0x0020, uuid: GATTUUID.battery),
            ])])
        }
    }

    @Test func aServiceStillIncludedCannotBeRemoved() throws {
        let store = try Self.makeStore()
        _ = try store.addServices([
            declaredBattery(),
            GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFE0)), includes: [.init(uuid: GATTUUID.battery)]),
        ])
        #expect(throws: GATTLayoutError.serviceStillIncluded(0x0019...0x001C)) { try store.removeService(at: 0x0019) }
        #expect(throws: GATTLayoutError.includedServiceMissing(GATTUUID.heartRate)) {
            try store.addServices([GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFE1)), includes: [.init(uuid: GATTUUID.heartRate)])])
        }
        #expect(throws: GATTLayoutError.extendedPropertiesMissing(Self.stored)) {
            try store.addServices([GATTDatabase.Service(uuid: Self.testService, characteristics: [
                GATTDatabase.Characteristic(uuid: Self.stored, properties: [.read, .extendedProperties]),
            ])])
        }
    }

    /// A layout that does not fit below 0xFFFF is refused whole, and a refused change
    /// leaves the served database and its hash as they were.
    @Test func aLayoutPastTheLastHandleIsRefusedAndChangesNothing() throws {
        let store = try Self.makeStore()
        let before = store.database
        let hash = store.databaseHash
        // 0x0001-0x0018 are in use, 65,511 handles are left: a service of n characteristics
        // takes 1 + 2n, so 32,755 fit exactly and 32,760 do not.
        let huge = GATTDatabase.Service(uuid: Self.testService, characteristics: Array(
            repeating: GATTDatabase.Characteristic(uuid: Self.stored, properties: [.read]), count: 32_760
        ))
        #expect(throws: GATTLayoutError.handlesExhausted) { try store.addServices([huge]) }
        #expect(throws: GATTLayoutError.includedServiceMissing(GATTUUID.heartRate)) {
            try store.addServices([declaredBattery(), GATTDatabase.Service(uuid: BluetoothUUID(UInt16(0xFFE1)), includes: [.init(uuid: GATTUUID.heartRate)])])
        }
        #expect(store.database == before)
        #expect(store.databaseHash == hash)
        // The last handle itself can be used.
        var fits = huge
        fits.characteristics.removeLast(32_760 - 32_755)
        let change = try #require(try store.addServices([fits]))
        #expect(change.changedHandles == 0x0019...0xFFFF)
        #expect(store.attribute(at: 0xFFFF)?.type == Self.stored)
    }

    /// Without a server feature there is no Server Supported Features characteristic: GATT
    /// ends with the Database Hash and the application's services follow at once.
    @Test func noServerFeaturesNoCharacteristic() throws {
        let store = try GATTServerStore(services: [GATTDatabase.Service(uuid: Self.testService, characteristics: [])])
        let listed = store.attributes(in: 0x0006...0xFFFF, limit: 100).map { "\(hex($0.handle)) \($0.type) \($0.groupEnd.map(hex) ?? "-")" }
        #expect(listed == [
            "0006 2800 000D", "0007 2803 -", "0008 2A05 -", "0009 2902 -", "000A 2803 -", "000B 2B29 -",
            "000C 2803 -", "000D 2B2A -", "000E 2800 000E",
        ])
    }

    @Test func centralAddressResolutionWhenAsked() async throws {
        let store = try GATTServerStore(services: [], configuration: GATTServerConfiguration(centralAddressResolution: true))
        #expect(store.attribute(at: 0x0007)?.type == GATTUUID.centralAddressResolution)
        #expect(try await read(store, 0x0007) == .success([0x01]))
        #expect(store.attribute(at: 0x0008)?.type == GATTUUID.primaryService)
    }

    static let readRequest = ATTPDU.readRequest(ReadRequest(attributeHandle: 0x0012))
    static let writeCommand = ATTPDU.writeCommand(WriteCommand(attributeHandle: 0x0012, attributeValue: [1]))

    /// Part G 2.5.2.1, with robust caching enabled: after a change a command is ignored,
    /// the first request gets Database Out Of Sync once, the next is served and the client
    /// is change-aware again.
    @Test func robustCachingOutOfSyncOnceThenAware() async throws {
        let store = try Self.makeStore()
        let context = Self.context(1)
        #expect(try await write(store, 0x000B, [0x01]) == nil)
        #expect(store.admit(Self.readRequest, context: context) == nil)
        _ = try store.addServices([declaredBattery()])
        #expect(store.admit(Self.writeCommand, context: context) == .databaseOutOfSync)
        #expect(store.admit(.exchangeMTURequest(ExchangeMTURequest(clientRxMTU: 100)), context: context) == nil)
        #expect(store.admit(Self.readRequest, context: context) == .databaseOutOfSync)
        #expect(store.admit(Self.readRequest, context: context) == nil)
        #expect(store.admit(Self.writeCommand, context: context) == nil)
        #expect(store.admit(Self.readRequest, context: context) == nil)
    }

    /// Reading the Database Hash (Read By Type 0x2B2A) is let through; the request after it
    /// makes the client change-aware without any Database Out Of Sync.
    @Test func robustCachingReadingTheHashMakesAware() async throws {
        let store = try Self.makeStore()
        let context = Self.context(1)
        #expect(try await write(store, 0x000B, [0x01]) == nil)
        _ = try store.addServices([declaredBattery()])
        let readHash = ATTPDU.readByTypeRequest(ReadByTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: GATTUUID.databaseHash))
        #expect(store.admit(readHash, context: context) == nil)
        #expect(try await read(store, 0x000D) == .success(store.databaseHash))
        #expect(store.admit(Self.writeCommand, context: context) == .databaseOutOfSync, "a command does not make it aware")
        #expect(store.admit(Self.readRequest, context: context) == nil)
        #expect(store.admit(Self.writeCommand, context: context) == nil)
    }

    /// Part G 2.5.2.1 lists what gets Database Out Of Sync: a request at an attribute handle
    /// or list of them, and a Read By Type of another type than «Include» or
    /// «Characteristic» over less than the whole range. Discovery by range is served (the
    /// client needs it to catch up), and does not use up the one 0x12.
    @Test func robustCachingServesDiscoveryAndNamesTheRequestsThatGetOutOfSync() async throws {
        let store = try Self.makeStore()
        let context = Self.context(1)
        #expect(try await write(store, 0x000B, [0x01]) == nil)
        _ = try store.addServices([declaredBattery()])
        let served: [ATTPDU] = [
            .findInformationRequest(FindInformationRequest(startingHandle: 1, endingHandle: 0xFFFF)),
            .readByGroupTypeRequest(ReadByGroupTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: GATTUUID.primaryService)),
            .findByTypeValueRequest(FindByTypeValueRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: 0x2800, attributeValue: [0x0F, 0x18])),
            .readByTypeRequest(ReadByTypeRequest(startingHandle: 0x10, endingHandle: 0x20, attributeType: GATTUUID.characteristicDeclaration)),
            .readByTypeRequest(ReadByTypeRequest(startingHandle: 0x10, endingHandle: 0x20, attributeType: GATTUUID.include)),
            .readByTypeRequest(ReadByTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: Self.notifying)),
            .executeWriteRequest(ExecuteWriteRequest(flags: .cancelAllPreparedWrites)),
        ]
        for request in served { #expect(store.admit(request, context: context) == nil, "\(request)") }
        let outOfSync: [ATTPDU] = [
            .readByTypeRequest(ReadByTypeRequest(startingHandle: 0x10, endingHandle: 0x20, attributeType: Self.notifying)),
            Self.readRequest,
            .readBlobRequest(ReadBlobRequest(attributeHandle: 0x0012, valueOffset: 1)),
            .readMultipleRequest(try ReadMultipleRequest(setOfHandles: [0x0012, 0x0014])),
            .writeRequest(WriteRequest(attributeHandle: 0x0012, attributeValue: [1])),
            .prepareWriteRequest(PrepareWriteRequest(attributeHandle: 0x0012, valueOffset: 0, partAttributeValue: [1])),
            .executeWriteRequest(ExecuteWriteRequest(flags: .immediatelyWriteAllPendingPreparedValues)),
        ]
        for request in outOfSync {
            // Each on a new change: the first of each gets the 0x12, the next request is served.
            _ = try store.addServices([declaredBattery()])
            for discovery in served { #expect(store.admit(discovery, context: context) == nil) }
            #expect(store.admit(request, context: context) == .databaseOutOfSync, "\(request)")
            #expect(store.admit(served[0], context: context) == nil)
            #expect(store.admit(Self.writeCommand, context: context) == nil, "change-aware again")
        }
    }

    /// Part G 2.5.2.1: nothing but the Service Changed indication goes to a change-unaware
    /// client that enabled robust caching; others keep getting their notifications.
    @Test func valuesAreWithheldFromChangeUnawareRobustClientsOnly() async throws {
        let store = try Self.makeStore()
        for bearer: UInt16 in [1, 2] {
            #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: bearer) == nil)
            #expect(try await write(store, 0x0009, [0x02, 0x00], bearer: bearer) == nil)
        }
        #expect(try await write(store, 0x000B, [0x01], bearer: 1) == nil)
        #expect(store.recipients(of: 0x0014).subscribers.map(\.bearer) == [1, 2])
        _ = try store.addServices([declaredBattery()])
        let withheld = store.recipients(of: 0x0014)
        #expect(withheld.subscribers.map(\.bearer) == [2] && withheld.withheld == [1])
        #expect(store.subscribers(of: 0x0014).keys.sorted() == [1, 2], "the CCCD itself is kept")
        #expect(store.recipients(of: 0x0008).subscribers.map(\.bearer) == [1, 2], "Service Changed still goes")
        #expect(store.admit(Self.readRequest, context: Self.context(1)) == .databaseOutOfSync)
        #expect(store.admit(Self.readRequest, context: Self.context(1)) == nil)
        #expect(store.recipients(of: 0x0014).subscribers.map(\.bearer) == [1, 2])
        #expect(store.recipients(of: 0x0014).withheld.isEmpty)
    }

    /// Without Robust Caching in its features a client never sees 0x12; a confirmed
    /// Service Changed makes a client change-aware.
    @Test func robustCachingOnlyForClientsThatEnabledIt() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x000B, [0x01], bearer: 2) == nil)
        #expect(try await write(store, 0x0009, [0x02, 0x00], bearer: 3) == nil)
        #expect(try await write(store, 0x000B, [0x01], bearer: 3) == nil)
        _ = try store.addServices([declaredBattery()])
        #expect(store.admit(Self.readRequest, context: Self.context(1)) == nil)
        #expect(store.admit(Self.writeCommand, context: Self.context(1)) == nil)
        store.serviceChangedConfirmed(Self.context(3))
        #expect(store.admit(Self.writeCommand, context: Self.context(3)) == nil)
        #expect(store.admit(Self.writeCommand, context: Self.context(2)) == .databaseOutOfSync)
    }

    /// The confirmation of a Service Changed indication is taken by a task that may run
    /// after the link ended (the manager's): it must not bring back the client the link's
    /// end removed. Such an entry was kept until the controller gave the handle to another
    /// central, which then inherited it: made change-unaware by the next database change
    /// while it was not even connected, and refused Database Out Of Sync (0x12) where a
    /// new client starts change-aware (Part G 2.5.2.1).
    @Test func aConfirmationAfterTheBearerClosedLeavesNothingForTheHandlesNextClient() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x0009, [0x02, 0x00], bearer: 3) == nil)
        store.bearerClosed(Self.context(3))
        store.serviceChangedConfirmed(Self.context(3))
        _ = try store.addServices([declaredBattery()])
        // A new central on the reused handle, with robust caching.
        #expect(try await write(store, 0x000B, [0x01], bearer: 3, instance: 2) == nil)
        #expect(store.admit(Self.writeCommand, context: Self.context(3, instance: 2)) == nil)
    }

    /// A request still running when its link closed (an application handler's wait, an
    /// Execute Write's earlier parts) writes a CCCD and Client Supported Features after the
    /// store forgot the bearer. It used to make the entry again, which the next central
    /// given the handle inherited: notifications it never asked for, of values it may not
    /// be allowed to read, and robust caching it never enabled. Now such a write changes
    /// nothing, before or after the next central came.
    @Test func aClosedBearersLateWriteLeavesNothingForTheHandlesNextClient() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: 3) == nil)
        store.bearerClosed(Self.context(3))
        #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: 3) == .unlikelyError)
        #expect(try await write(store, 0x000B, [0x01], bearer: 3) == .unlikelyError)
        #expect(store.subscribers(of: 0x0014).isEmpty)
        #expect(try await read(store, 0x0016, bearer: 3, instance: 2) == .success([0x00, 0x00]))
        #expect(try await read(store, 0x000B, bearer: 3, instance: 2) == .success([0x00]))

        #expect(try await write(store, 0x0016, [0x02, 0x00], bearer: 3, instance: 2) == nil)
        #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: 3) == .unlikelyError)
        #expect(try await read(store, 0x0016, bearer: 3) == .success([0x00, 0x00]))
        #expect(store.subscribers(of: 0x0014) == [3: [.indication]])

        // A database change between the close and the late write changes none of this
        // (it once rebuilt the store's state and forgot the instances closed).
        store.bearerClosed(Self.context(4))
        _ = try store.addServices([declaredBattery()])
        #expect(try await write(store, 0x0016, [0x01, 0x00], bearer: 4) == .unlikelyError)
        #expect(store.subscribers(of: 0x0014)[4] == nil)
        #expect(store.bondedState(Self.context(4)) == nil)
        #expect(store.bondedState(Self.context(3, instance: 2))?.configurations == [0x0014: 0x0002])
    }

    /// The manager restores a bonded central's CCCDs on its event task, which can run after
    /// the link's server closed: nothing may be left for the next central on the handle.
    @Test func aRestoreAfterTheBearerClosedLeavesNothingForTheHandlesNextClient() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x0016, [0x02, 0x00], bearer: 3) == nil)
        let bonded = store.bondedState(bearer: 3)
        store.bearerClosed(Self.context(3))
        store.restoreBondedState(bonded, context: Self.context(3))
        #expect(store.subscribers(of: 0x0014).isEmpty)
        #expect(store.bondedState(bearer: 3).configurations.isEmpty)
    }

    /// A bond keeps CCCDs and features; the client comes back change-aware only under the
    /// same hash.
    @Test func bondedStateRoundTrips() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x000B, [0x01]) == nil)
        #expect(try await write(store, 0x0016, [0x02, 0x00]) == nil)
        let bonded = store.bondedState(bearer: 1)
        #expect(bonded.configurations == [0x0014: 0x0002])
        #expect(bonded.wasChangeAware)
        store.bearerClosed(Self.context(1))

        store.restoreBondedState(bonded, context: Self.context(7))
        #expect(try await read(store, 0x0016, bearer: 7) == .success([0x02, 0x00]))
        #expect(try await read(store, 0x000B, bearer: 7) == .success([0x01]))
        #expect(store.admit(Self.readRequest, context: Self.context(7)) == nil)

        _ = try store.addServices([declaredBattery()])
        store.restoreBondedState(bonded, context: Self.context(8))
        #expect(store.admit(Self.readRequest, context: Self.context(8)) == .databaseOutOfSync)
        // A stale CCCD on a handle that can no longer indicate is dropped.
        var stale = bonded
        stale.configurations = [0x0012: 0x0001, 0x0014: 0x0002]
        store.restoreBondedState(stale, context: Self.context(9))
        #expect(store.bondedState(bearer: 9).configurations == [0x0014: 0x0002])
    }

    /// The ATT server checks an attribute's permissions, then reads or writes it, maybe
    /// after a wait (a handler, an Execute Write's earlier values) during which the
    /// application replaced the service: the attribute it checked is no longer there, and
    /// the one now at its handle (which needs encryption) is neither read nor written.
    @Test func aReadOrWriteOfAnAttributeNoLongerThereIsInvalidHandle() async throws {
        let store = try Self.makeStore()
        let checked = try #require(store.attribute(at: 0x0012))
        _ = try store.removeService(at: 0x0010)
        _ = try store.addServices([GATTDatabase.Service(uuid: Self.testService, characteristics: [
            GATTDatabase.Characteristic(uuid: Self.stored, properties: [.read, .write], value: [9], permissions: ATTPermissions(
                read: .init(protection: .encryption), write: .init(protection: .encryption))),
        ])])
        #expect(store.attribute(at: 0x0012).map { $0 != checked } == true)
        #expect(await store.read(checked, context: Self.context(1)) == .failure(.invalidHandle))
        #expect(await store.write(checked, value: [7], kind: .request, context: Self.context(1)) == .invalidHandle)
        #expect(try await read(store, 0x0012) == .success([9]))
    }

    /// A bonded client subscribed to the test service's notifying value (0x0014, FFF2). While
    /// it is away the service is removed and another added in its place: 0x0014 is now a
    /// heart rate measurement, which also notifies. Its CCCD must not come back there (the
    /// client would get values it never asked for); one on a characteristic of the same
    /// type at the same handle does. A state saved before types were recorded keeps the
    /// old rule (any characteristic that can notify).
    @Test func aRestoredCCCDNeedsTheSameCharacteristicTypeAtItsHandle() async throws {
        let store = try Self.makeStore()
        #expect(try await write(store, 0x0016, [0x01, 0x00]) == nil)
        let bonded = store.bondedState(bearer: 1)
        #expect(bonded.characteristicTypes == [0x0014: Self.notifying])
        store.bearerClosed(Self.context(1))
        _ = try store.removeService(at: 0x0010)
        func replacement(_ uuid: BluetoothUUID) -> GATTDatabase.Service {
            GATTDatabase.Service(uuid: Self.testService, characteristics: [
                GATTDatabase.Characteristic(uuid: Self.stored, properties: [.read], value: [1]),
                GATTDatabase.Characteristic(uuid: uuid, properties: [.notify], value: [0]),
            ])
        }
        _ = try store.addServices([replacement(BluetoothUUID(UInt16(0x2A37)))])
        #expect(store.database.characteristic(BluetoothUUID(UInt16(0x2A37)))?.valueHandle == 0x0014)
        store.restoreBondedState(bonded, context: Self.context(2))
        #expect(store.bondedState(bearer: 2).configurations.isEmpty)
        var untyped = bonded
        untyped.characteristicTypes = [:]
        store.restoreBondedState(untyped, context: Self.context(3))
        #expect(store.bondedState(bearer: 3).configurations == [0x0014: 0x0001])

        _ = try store.removeService(at: 0x0010)
        _ = try store.addServices([replacement(Self.notifying)])
        store.restoreBondedState(bonded, context: Self.context(4))
        #expect(store.bondedState(bearer: 4).configurations == [0x0014: 0x0001])
    }

    func hex(_ value: UInt16) -> String { Hex.string([UInt8(value >> 8), UInt8(value & 0xFF)]) }
}
