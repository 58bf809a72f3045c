import ATT
import BluetoothCore

/// The GATT client procedures (Core 5.4 Vol 3 Part G 4) over one ATT client.
///
/// - Discovery asks for whole handle ranges and takes every entry a response packs, so
///   the number of round trips is what the MTU and the server allow, never more: each
///   chain continues after the last handle it was given and stops at the range's end or
///   at Attribute Not Found. Characteristics and includes are discovered over the span of
///   all services at once rather than service by service.
/// - ``discover(remembered:)`` implements GATT Caching (Part G 2.5.2): given a database
///   remembered from an earlier connection, it reads the Database Hash and skips discovery
///   when the hash is unchanged. It also subscribes to Service Changed (indications), and
///   on each indication rediscovers only the affected services and reports them on
///   ``databaseChanges``.
/// - Errors are ``GATTError``: ATT's Error Responses keep the specification's codes, a
///   disconnection carries its HCI reason, and a silent peer ends in ATT's transaction
///   timeout.
///
/// An actor: procedures may run concurrently (ATT queues their requests), and each sees a
/// consistent ``database``. Long reads and writes are a series of requests that another
/// procedure's requests may interleave with; prepared writes share the server's one queue,
/// so run one long or reliable write at a time.
public actor GATTClient {
    public nonisolated let att: ATTClient
    /// The database discovered (or remembered and confirmed) on this connection.
    public private(set) var database: GATTDatabase?
    /// Told after each Service Changed indication once the affected range is rediscovered;
    /// ends when the client is released (a closed bearer brings no more changes).
    public nonisolated let databaseChanges: AsyncStream<GATTDatabaseChange>
    let changes: AsyncStream<GATTDatabaseChange>.Continuation

    /// Subscriptions per value handle: how many consumers, and what the CCCD holds.
    var subscriptions: [UInt16: (consumers: Int, configuration: ClientCharacteristicConfiguration)] = [:]
    /// How to end each consumer's subscription per value handle, for ``unsubscribe(from:)``.
    var consumerEnds: [UInt16: [UInt64: @Sendable () -> Void]] = [:]
    var nextConsumerID: UInt64 = 1
    var serviceChangedSubscription: ATTSubscription?
    var serviceChangedTask: Task<Void, Never>?
    /// Learnt from a Request Not Supported: Read Multiple Variable is not tried again.
    var readMultipleVariableUnsupported = false

    public init(att: ATTClient) {
        self.att = att
        (databaseChanges, changes) = AsyncStream.makeStream(of: GATTDatabaseChange.self, bufferingPolicy: .bufferingNewest(16))
    }

    deinit {
        serviceChangedTask?.cancel()
        changes.finish()
    }

    /// Runs an ATT request, making its failure a ``GATTError``.
    func request<T>(_ body: () async throws(ATTError) -> T) async throws(GATTError) -> T {
        do { return try await body() } catch { throw .att(error) }
    }

    // MARK: Whole database and caching

    /// Brings the client's view of the server's database up to date, and subscribes to
    /// Service Changed when the server has it.
    ///
    /// With a `remembered` database that carries a Database Hash, reads the server's hash
    /// (one Read By Type request) and, when it is unchanged, takes the remembered database
    /// without any discovery request. Otherwise (no remembered copy, no hash, a different
    /// hash) discovers everything and reads the hash to remember with it.
    ///
    /// Keeping the result between connections is the caller's choice (in memory now; a
    /// key store later): a database is only worth remembering for a bonded peer.
    public func discover(remembered: GATTDatabase? = nil) async throws(GATTError) -> GATTDatabase {
        var discovered: GATTDatabase
        if let remembered, let hash = remembered.databaseHash {
            let current = try await readDatabaseHash()
            if current == hash {
                discovered = remembered
            } else {
                discovered = GATTDatabase(services: try await discoverServices(in: 0x0001...0xFFFF), databaseHash: current)
            }
        } else {
            discovered = GATTDatabase(services: try await discoverServices(in: 0x0001...0xFFFF))
            if discovered.characteristic(GATTUUID.databaseHash) != nil {
                discovered.databaseHash = try await readDatabaseHash()
            }
        }
        database = discovered
        try await subscribeToServiceChanged()
        return discovered
    }

    /// The Database Hash via Read Using Characteristic UUID, or nil when the server has none.
    func readDatabaseHash() async throws(GATTError) -> [UInt8]? {
        do {
            return try await readUsingCharacteristicUUID(GATTUUID.databaseHash).first?.value
        } catch {
            if error.errorCode == .attributeNotFound { return nil }
            throw error
        }
    }

    // MARK: Service Changed (Part G 7.1)

    private func subscribeToServiceChanged() async throws(GATTError) {
        guard serviceChangedSubscription == nil,
              let characteristic = database?.characteristic(GATTUUID.serviceChanged, in: GATTUUID.genericAttribute),
              let cccd = characteristic.clientCharacteristicConfigurationHandle
        else { return }
        let (indications, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        // Registered before the CCCD is written, so no indication can slip past.
        serviceChangedSubscription = att.addValueHandler(handle: characteristic.valueHandle) { value in
            continuation.yield(value.value)
        }
        // One consumer, so indications are handled one after another, in order.
        serviceChangedTask = Task { [weak self] in
            for await value in indications {
                await self?.serviceChanged(value)
            }
        }
        try await request { () async throws(ATTError) in
            try await att.write(cccd, value: ClientCharacteristicConfiguration.indication.bytes)
        }
    }

    /// Invalidates the services the indication names and discovers them again.
    func serviceChanged(_ value: [UInt8]) async {
        var reader = ByteReader(value)
        guard let start = try? reader.readUInt16(), let end = try? reader.readUInt16(), start <= end, start > 0,
              var updated = database
        else { return }
        let affected = updated.invalidate(start...end)
        database = updated
        do {
            let services = try await discoverServices(in: affected)
            updated = database ?? updated
            updated.insert(services)
            if updated.databaseHash != nil { updated.databaseHash = try await readDatabaseHash() }
            database = updated
            changes.yield(GATTDatabaseChange(affectedHandles: affected, database: updated))
        } catch {
            // The link is failing; the next connection discovers again (the removed
            // services stay removed, so nothing stale is offered meanwhile).
        }
    }
}
