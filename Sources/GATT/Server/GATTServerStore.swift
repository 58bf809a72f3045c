import ATT
import BluetoothCore

/// Our GATT server's attribute table, as the ATT server serves it (``ATTAttributeStore``):
/// the shared ``GATTDatabase`` model laid out into handles, with the GAP and GATT services
/// added first, values stored or produced by application handlers, per-bearer CCCDs and
/// Client Supported Features, robust caching (Core 5.4 Vol 3 Part G 2.5.2.1), and services
/// added or removed at run time.
///
/// All state sits behind one lock that is never held across an `await`: application
/// handlers run outside it.
public final class GATTServerStore: ATTAttributeStore {
    /// Decides attributes whose permissions ask for authorization; nil allows.
    public typealias Authorizer = @Sendable (ATTAttribute, ATTOperation, ATTServerContext) async -> ATTErrorCode?

    struct State: Sendable {
        var database: GATTDatabase
        var table: GATTAttributeTable {
            didSet { recipientsByValueHandle = [:] }
        }
        /// The Database Hash as the characteristic carries it.
        var hash: [UInt8]
        var clients: [UInt16: GATTServerClient] = [:] {
            didSet { recipientsByValueHandle = [:] }
        }
        /// ``recipients(of:)``'s answers since the clients or the layout last changed (at
        /// most one per value handle).
        var recipientsByValueHandle: [UInt16: GATTRecipients] = [:]
        /// By bearer number, the ``ATTServerContext/instance`` of the last bearer that
        /// closed with it (at most one entry per number).
        var closedInstances: [UInt16: UInt64] = [:]

        init(database: GATTDatabase) {
            self.database = database
            table = GATTAttributeTable(database)
            // Every layout the store makes carries values for its Extended Properties
            // (layout refuses one without), so the hash is always known.
            hash = database.computedHash ?? []
        }
    }

    let state: Lock<State>
    public let configuration: GATTServerConfiguration
    private let authorizer: Authorizer?
    /// The GAP and GATT services' handles: laid out first, never moved or removed.
    private let builtInHandles: ClosedRange<UInt16>

    /// The longest value a read may answer (Core 5.4 Vol 3 Part F 3.2.9): a handler's longer
    /// value is answered with Unlikely Error (0x0E), never truncated silently.
    public static let maximumValueLength = 512

    /// - Parameters:
    ///   - services: the application's services, declared (``GATTDatabase/Service`` without
    ///     handles); laid out after GAP and GATT.
    ///   - authorizer: decides attributes whose permissions require authorization; without
    ///     one they are allowed.
    public init(
        services: [GATTDatabase.Service], configuration: GATTServerConfiguration = GATTServerConfiguration(),
        authorizer: Authorizer? = nil
    ) throws(GATTLayoutError) {
        self.configuration = configuration
        self.authorizer = authorizer
        let builtIn = configuration.builtInServices
        let database = try GATTDatabase.laidOut(from: builtIn + services)
        builtInHandles = 0x0001...database.services[builtIn.count - 1].handles.upperBound
        state = Lock(State(database: database))
    }

    /// Application handlers that missed ``GATTServerConfiguration/handlerDeadline``.
    public var handlerDeadlinesMissed: Int { missedDeadlines.withLock { $0 } }
    private let missedDeadlines = Lock(0)

    /// The database as served now: handles, stored values, permissions.
    public var database: GATTDatabase { state.withLock { $0.database } }

    /// The Database Hash as its characteristic carries it (least significant octet first).
    public var databaseHash: [UInt8] { state.withLock { $0.hash } }

    // MARK: ATTAttributeStore

    public func attributes(in range: ClosedRange<UInt16>, limit: Int) -> [ATTAttribute] {
        state.withLock { state in
            let table = state.table
            var found: [ATTAttribute] = []
            var index = table.firstIndex(atOrAfter: range.lowerBound)
            while index < table.attributes.count, found.count < limit, table.attributes[index].handle <= range.upperBound {
                found.append(table.attributes[index])
                index += 1
            }
            return found
        }
    }

    public func attribute(at handle: UInt16) -> ATTAttribute? {
        state.withLock { state in state.table.index(of: handle).map { state.table.attributes[$0] } }
    }

    /// An authorizer that misses the handler deadline denies (Insufficient Authorization):
    /// silence is not consent.
    public func authorize(_ attribute: ATTAttribute, operation: ATTOperation, context: ATTServerContext) async -> ATTErrorCode? {
        guard let authorizer else { return nil }
        guard let deadline = handlerDeadline(context) else { return .insufficientAuthorization }
        let answer = await GATTHandlerCall.run(until: deadline) { () async throws(ATTErrorCode) -> ATTErrorCode? in
            await authorizer(attribute, operation, context)
        }
        guard case .success(let decision) = answer else {
            missedDeadlines.withLock { $0 += 1 }
            return .insufficientAuthorization
        }
        return decision
    }

    /// When a handler called for `context` must have answered: ``GATTServerConfiguration/handlerDeadline``
    /// from now, or the request's own deadline when that comes first (a Read Multiple or an
    /// Execute Write may call many). Nil for a bearer that closed: its request, still
    /// running, calls no handler any more.
    private func handlerDeadline(_ context: ATTServerContext) -> ContinuousClock.Instant? {
        guard !state.withLock({ $0.isClosed(context) }) else { return nil }
        let own = ContinuousClock.now + configuration.handlerDeadline
        guard let request = context.requestDeadline else { return own }
        return min(own, request)
    }

    /// Everything but a handler's value: stored values, declarations, the per-client
    /// attributes (CCCDs, Client Supported Features, Database Hash).
    public func storedValue(_ attribute: ATTAttribute, context: ATTServerContext) -> Result<[UInt8], ATTErrorCode>? {
        switch state.withLock({ $0.readPlan(attribute, context: context) }) {
        case .value(let value): .success(value)
        case .failure(let code): .failure(code)
        case .handler: nil
        }
    }

    public func read(_ attribute: ATTAttribute, context: ATTServerContext) async -> Result<[UInt8], ATTErrorCode> {
        switch state.withLock({ $0.readPlan(attribute, context: context) }) {
        case .value(let value):
            return .success(value)
        case .failure(let code):
            return .failure(code)
        case .handler(let read):
            guard let deadline = handlerDeadline(context) else { return .failure(.unlikelyError) }
            guard let answer = await GATTHandlerCall.run(until: deadline, { () async throws(ATTErrorCode) in try await read(context) }) else {
                missedDeadlines.withLock { $0 += 1 }
                return .failure(.unlikelyError)
            }
            return answer.flatMap { $0.count <= Self.maximumValueLength ? .success($0) : .failure(.unlikelyError) }
        }
    }

    public func write(_ attribute: ATTAttribute, value: [UInt8], kind: ATTWriteKind, context: ATTServerContext) async -> ATTErrorCode? {
        switch state.withLock({ $0.write(value, to: attribute, context: context) }) {
        case .done(let code):
            return code
        case .handler(let write):
            guard let deadline = handlerDeadline(context) else { return .unlikelyError }
            guard let answer = await GATTHandlerCall.run(until: deadline, { () async throws(ATTErrorCode) in try await write(value, context) }) else {
                missedDeadlines.withLock { $0 += 1 }
                return .unlikelyError
            }
            if case .failure(let code) = answer { return code }
            return nil
        }
    }

    public func admit(_ request: ATTPDU, context: ATTServerContext) -> ATTErrorCode? {
        admitNotingAwareness(request, context: context).error
    }

    /// ``admit(_:context:)``, and whether the request made its client change-aware (robust
    /// caching), which a bonded client's saved state must then record.
    public func admitNotingAwareness(_ request: ATTPDU, context: ATTServerContext) -> (error: ATTErrorCode?, becameAware: Bool) {
        state.withLock { $0.admit(request, context: context) }
    }

    /// Whether the client of `context` set Multiple Handle Value Notifications in its Client
    /// Supported Features (Part G 7.2), which lets its server send them.
    public func acceptsMultipleNotifications(_ context: ATTServerContext) -> Bool {
        state.withLock { $0.client(context)?.supportedFeatures.contains(.multipleHandleValueNotifications) ?? false }
    }

    /// Forgets the bearer's client; a request of it still running (a handler's wait)
    /// changes nothing from now on, so the next bearer given the number starts clean.
    public func bearerClosed(_ context: ATTServerContext) {
        state.withLock { state in
            state.closedInstances[context.bearer] = max(state.closedInstances[context.bearer] ?? 0, context.instance)
            if let client = state.clients[context.bearer], client.instance <= context.instance {
                state.clients[context.bearer] = nil
            }
        }
    }

    // MARK: Run-time changes (Part G 7.1)

    /// Adds declared services after the last handle and returns what changed; every
    /// connected client becomes change-unaware. Nil when `services` is empty.
    public func addServices(_ services: [GATTDatabase.Service]) throws(GATTLayoutError) -> GATTServerChange? {
        try state.withLock { (state) throws(GATTLayoutError) -> GATTServerChange? in
            var database = state.database
            guard let range = try database.add(services) else { return nil }
            return state.replaceDatabase(database, changed: range)
        }
    }

    /// Removes the service starting at `handle` and returns what changed; every connected
    /// client becomes change-unaware and its CCCDs of the removed characteristics are
    /// forgotten. The GAP and GATT services the store added stay.
    public func removeService(at handle: UInt16) throws(GATTLayoutError) -> GATTServerChange {
        guard !builtInHandles.contains(handle) else { throw .builtInService(handle) }
        return try state.withLock { (state) throws(GATTLayoutError) -> GATTServerChange in
            var database = state.database
            let range = try database.removeService(at: handle)
            return state.replaceDatabase(database, changed: range)
        }
    }

    /// The client of `context` confirmed a Service Changed indication: it knows of the
    /// change, so it is change-aware again (BlueZ does the same on the confirmation). Only
    /// a client still here: one that was indicated had subscribed, so it has an entry
    /// until its bearer closed, and a confirmation taken after that must not bring the
    /// entry back for the next central the handle is given to.
    public func serviceChangedConfirmed(_ context: ATTServerContext) {
        state.withLock { state in
            guard state.client(context) != nil else { return }
            state.clients[context.bearer]?.isChangeAware = true
        }
    }

    /// The application changes a stored value (a characteristic value or descriptor; at
    /// most 512 octets, Vol 3 Part F 3.2.9); false when `handle` holds neither or the value
    /// is too long. Whom to notify is ``subscribers(of:)``.
    @discardableResult
    public func setValue(_ value: [UInt8], at handle: UInt16) -> Bool {
        guard value.count <= Self.maximumValueLength else { return false }
        return state.withLock { state in
            guard let index = state.table.index(of: handle) else { return false }
            return state.store(value, at: state.table.sources[index])
        }
    }

    /// The bearers subscribed to the characteristic whose value is at `valueHandle`, with
    /// what they asked for (their CCCDs).
    public func subscribers(of valueHandle: UInt16) -> [UInt16: ClientCharacteristicConfiguration] {
        state.withLock { state in
            state.clients.compactMapValues { $0.configurations[valueHandle] }
        }
    }

    /// Whom the driver notifies or indicates a new value of `valueHandle`; see ``GATTRecipients``.
    public func recipients(of valueHandle: UInt16) -> GATTRecipients {
        state.withLock { $0.recipients(of: valueHandle) }
    }
}

extension GATTServerStore.State {
    mutating func replaceDatabase(_ database: GATTDatabase, changed: ClosedRange<UInt16>) -> GATTServerChange {
        // The database's fields made anew; the clients and the instances closed stay (a
        // closed bearer's late write after a change must still change nothing).
        let laidOut = GATTServerStore.State(database: database)
        (self.database, table, hash) = (laidOut.database, laidOut.table, laidOut.hash)
        let subscribable = Set(database.services.flatMap(\.characteristics)
            .filter { !$0.properties.isDisjoint(with: [.notify, .indicate]) }.map(\.valueHandle))
        clients = clients.mapValues { client in
            var client = client
            client.becomeChangeUnaware()
            client.configurations = client.configurations.filter { subscribable.contains($0.key) }
            return client
        }
        let serviceChanged = table.handle(of: .serviceChanged)
        let subscribers = serviceChanged.map { handle in
            clients.filter { $0.value.configurations[handle]?.contains(.indication) == true }.keys.sorted()
        } ?? []
        return GATTServerChange(changedHandles: changed, serviceChangedHandle: serviceChanged, subscribers: subscribers)
    }
}
