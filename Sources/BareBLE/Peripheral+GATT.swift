import ATT
import BluetoothCore
import GATT

// The GATT side of a peripheral: discovery (whole database, cached per Central), reads,
// writes and notifications. Every procedure is GATTClient's; this layer turns its values
// into objects and remembers what was read.
extension Peripheral {
    // MARK: Discovery

    /// Discovers the whole database and returns its services (those with `uuids` when
    /// given; ``services`` always holds all of them).
    ///
    /// The whole database is discovered in one go because that takes the fewest round
    /// trips: includes and characteristics are asked for over all services at once. When
    /// the Central remembers this peer's database with a Database Hash, the hash is read
    /// and, unchanged, no discovery request is sent at all. Subscribes to Service Changed.
    @discardableResult
    public func discoverServices(_ uuids: [BluetoothUUID]? = nil) async throws(PeripheralError) -> [Service] {
        let remembered = central.cache.database(for: identity)
        let database: GATTDatabase
        do { database = try await gatt.discover(remembered: remembered) } catch { throw .gatt(error) }
        let services = adopt(database)
        guard let uuids else { return services }
        return services.filter { uuids.contains($0.uuid) }
    }

    /// The services `service` includes. Discovered with the database: this discovers it
    /// when that has not happened yet, and sends nothing otherwise.
    public func discoverIncludedServices(for service: Service) async throws(PeripheralError) -> [Service] {
        try await current(service).includedServices
    }

    /// The characteristics of `service` (discovered with the database; see
    /// ``discoverIncludedServices(for:)``).
    public func discoverCharacteristics(for service: Service) async throws(PeripheralError) -> [Characteristic] {
        try await current(service).characteristics
    }

    /// The descriptors of `characteristic` (discovered with the database).
    public func discoverDescriptors(for characteristic: Characteristic) async throws(PeripheralError) -> [Descriptor] {
        if services.isEmpty { try await discoverServices() }
        guard let found = self.characteristic(valueHandle: characteristic.valueHandle) else {
            throw .unknownAttribute("\(characteristic)")
        }
        return found.descriptors
    }

    private func current(_ service: Service) async throws(PeripheralError) -> Service {
        if services.isEmpty { try await discoverServices() }
        guard let found = services.first(where: { $0.declaration == service.declaration }) else {
            throw .unknownAttribute("\(service)")
        }
        return found
    }

    /// Makes `database` this peripheral's objects and the Central's remembered copy. An
    /// object whose declaration is unchanged is kept, so its last value survives.
    @discardableResult
    func adopt(_ database: GATTDatabase) -> [Service] {
        central.cache.remember(database, for: identity)
        discovered.withLock { $0 = database }
        return objects.withLock { objects in
            var previous: [UInt16: Characteristic] = [:]
            for service in objects {
                for characteristic in service.characteristics { previous[characteristic.declaration.handle] = characteristic }
            }
            func build(_ declaration: GATTDatabase.Characteristic, in service: GATTDatabase.Service) -> Characteristic {
                if let kept = previous[declaration.handle], kept.declaration == declaration, kept.serviceUUID == service.uuid {
                    return kept
                }
                return Characteristic(declaration, serviceUUID: service.uuid, descriptors: declaration.descriptors.map(Descriptor.init))
            }
            // Included services point at services of the same database, which are built
            // first without includes, then with them (includes are one level deep here:
            // an included service's own includes are reached through `services`).
            let plain = database.services.map { service in
                Service(service, characteristics: service.characteristics.map { build($0, in: service) }, includedServices: [])
            }
            let built = zip(database.services, plain).map { declaration, service in
                let includes = declaration.includes.compactMap { include in plain.first { $0.handles == include.serviceHandles } }
                return Service(declaration, characteristics: service.characteristics, includedServices: includes)
            }
            objects = built
            return built
        }
    }

    // MARK: Lookups

    /// The first service with `uuid`.
    public func service(_ uuid: BluetoothUUID) -> Service? {
        services.first { $0.uuid == uuid }
    }

    /// The first characteristic with `uuid`, in the service with `serviceUUID` when given.
    public func characteristic(_ uuid: BluetoothUUID, in serviceUUID: BluetoothUUID? = nil) -> Characteristic? {
        for service in services where serviceUUID == nil || service.uuid == serviceUUID {
            if let found = service.characteristic(uuid) { return found }
        }
        return nil
    }

    /// The characteristic whose value (or declaration) is at `handle`.
    public func characteristic(valueHandle handle: UInt16) -> Characteristic? {
        for service in services {
            if let found = service.characteristics.first(where: { $0.valueHandle == handle || $0.declaration.handle == handle }) {
                return found
            }
        }
        return nil
    }

    /// The descriptor at `handle`.
    public func descriptor(handle: UInt16) -> Descriptor? {
        for service in services {
            for characteristic in service.characteristics {
                if let found = characteristic.descriptors.first(where: { $0.handle == handle }) { return found }
            }
        }
        return nil
    }

    // MARK: Reading and writing

    /// Reads the value (long values completely, with Read Blob) and keeps it as
    /// ``Characteristic/value``.
    @discardableResult
    public func readValue(for characteristic: Characteristic) async throws(PeripheralError) -> [UInt8] {
        let value = try await securing { () throws(PeripheralError) in
            do throws(GATTError) { return try await gatt.readValue(characteristic.valueHandle) } catch { throw .gatt(error) }
        }
        characteristic.store(value)
        return value
    }

    /// Reads a descriptor's value and keeps it as ``Descriptor/value``.
    @discardableResult
    public func readValue(for descriptor: Descriptor) async throws(PeripheralError) -> [UInt8] {
        let value = try await securing { () throws(PeripheralError) in
            do throws(GATTError) { return try await gatt.readValue(descriptor.handle) } catch { throw .gatt(error) }
        }
        descriptor.store(value)
        return value
    }

    /// Writes `value`. With a response it is confirmed (a long write when longer than
    /// ATT_MTU - 3, up to 512 bytes); without, it is sent at once and nothing comes back,
    /// not even an error, so it must fit ``maximumWriteValueLength(for:)``.
    public func writeValue(_ value: [UInt8], for characteristic: Characteristic, type: WriteType) async throws(PeripheralError) {
        let limit = maximumWriteValueLength(for: type)
        guard value.count <= limit else {
            throw .notSupported("a value of \(value.count) bytes is longer than \(limit), the most one write \(type == .withResponse ? "with" : "without") response carries here")
        }
        try await securing { () throws(PeripheralError) in
            do throws(GATTError) {
                switch type {
                case .withResponse: try await gatt.writeValue(characteristic.valueHandle, value: value)
                case .withoutResponse: try await gatt.writeWithoutResponse(characteristic.valueHandle, value: value)
                }
            } catch {
                throw .gatt(error)
            }
        }
    }

    /// Writes a descriptor's value (with a response).
    public func writeValue(_ value: [UInt8], for descriptor: Descriptor) async throws(PeripheralError) {
        try await securing { () throws(PeripheralError) in
            do throws(GATTError) { try await gatt.writeValue(descriptor.handle, value: value) } catch { throw .gatt(error) }
        }
        descriptor.store(value)
    }

    // MARK: Notifications

    /// How many values a notification stream keeps for a consumer that falls behind: the
    /// peer decides how fast values come, so the oldest are dropped past this, and each
    /// drop is counted in ``Characteristic/droppedNotifications``.
    public static let notificationBufferLimit = ATTClient.defaultStreamBuffer

    /// Subscribes to `characteristic` (writes its CCCD: notifications, or indications when
    /// `indicate` or when it cannot notify) and returns its values as they arrive, each
    /// also kept as ``Characteristic/value``. The stream ends when the link ends or after
    /// ``setNotifyValue(_:for:)`` with false; a consumer that stops turns the CCCD off in
    /// the background.
    ///
    /// The stream keeps the newest ``notificationBufferLimit`` values: a consumer that
    /// falls further behind loses the oldest, counted in
    /// ``Characteristic/droppedNotifications`` (``Characteristic/value`` is always the
    /// newest).
    public func notifications(for characteristic: Characteristic, indicate: Bool = false) async throws(PeripheralError) -> AsyncStream<[UInt8]> {
        let properties = characteristic.properties
        let configuration: ClientCharacteristicConfiguration
        if indicate || !properties.contains(.notify) {
            guard properties.contains(.indicate) else {
                throw .notSupported("\(characteristic) can neither notify nor indicate")
            }
            configuration = .indication
        } else {
            configuration = .notification
        }
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(Self.notificationBufferLimit))
        // Values go straight from the bearer's thread into the one bounded buffer, so every
        // drop is seen here and counted (a second stream and a forwarding task would drop
        // out of sight).
        let subscription = try await securing { () throws(PeripheralError) in
            do throws(GATTError) {
                return try await gatt.subscribe(to: characteristic.declaration, configuration: configuration, onEnd: {
                    continuation.finish()
                }) { value in
                    characteristic.store(value)
                    if case .dropped = continuation.yield(value) { characteristic.countDroppedNotification() }
                }
            } catch {
                throw .gatt(error)
            }
        }
        characteristic.setNotifying(true)
        continuation.onTermination = { _ in
            characteristic.setNotifying(false)
            subscription.cancel()
        }
        return stream
    }

    /// With false: ends every notification stream of `characteristic` and turns its CCCD
    /// off, returning once the peer acknowledged (do this before disconnecting or exiting).
    /// With true: the same as ``notifications(for:indicate:)`` with its stream discarded
    /// (values still update ``Characteristic/value``).
    public func setNotifyValue(_ enabled: Bool, for characteristic: Characteristic) async throws(PeripheralError) {
        if enabled {
            let stream = try await notifications(for: characteristic)
            Task { for await _ in stream {} }
            return
        }
        do { try await gatt.unsubscribe(from: characteristic.declaration) } catch { throw .gatt(error) }
        characteristic.setNotifying(false)
    }
}
