import ATT
import BluetoothCore
import Bonding
import GATT
import L2CAP

/// A GATT server on a ``Central``'s controller: what CoreBluetooth's `CBPeripheralManager`
/// is, with async methods and an event stream instead of delegate callbacks. It puts
/// together the three layers below it: ``PeripheralHost`` accepts centrals, a
/// ``GATTServerStore`` holds the database, and each link gets its own ``ATTServer`` over
/// that store, told of the link's security (encryption, how the key was made, key size,
/// whether a bond exists) and the central's identity whenever they change.
///
/// | CoreBluetooth | BareBLE |
/// | --- | --- |
/// | `CBPeripheralManager(delegate:queue:)` | ``init(central:advertising:services:gatt:att:authorizer:)`` on a powered-on ``Central`` |
/// | `add(_:)`, `didAdd` | ``add(_:)`` (returns the laid-out services) |
/// | `remove(_:)`, `removeAllServices()` | ``remove(serviceAt:)`` |
/// | `startAdvertising(_:)`, `stopAdvertising()` | ``startAdvertising()``, ``stopAdvertising()`` (data in ``PeripheralHost/Options``) |
/// | `CBMutableCharacteristic(value:)` | ``GATTDatabase/Characteristic`` with a `value` (stored) |
/// | `didReceiveRead`, `didReceiveWrite`, `respond(to:withResult:)` | a ``GATTAttributeHandler`` on the characteristic: it returns the value or throws the ATT error |
/// | `updateValue(_:for:onSubscribedCentrals:)` | ``updateValue(_:for:onSubscribedCentrals:)`` |
/// | `peripheralManagerIsReady(toUpdateSubscribers:)` | ``PeripheralManagerEvent/readyToUpdateSubscribers`` |
/// | `didSubscribeTo`, `didUnsubscribeFrom` | ``PeripheralManagerEvent/subscribed(_:_:)``, ``PeripheralManagerEvent/unsubscribed(_:)`` |
/// | `CBCentral`, `maximumUpdateValueLength` | ``RemoteCentral``, its ``RemoteCentral/mtu`` - 3 |
///
/// Each accepted link carries our ATT client too: a `GATTClient` over
/// ``RemoteCentral/att`` reads the central's own server (as an ANCS consumer does) while the
/// central reads ours. The ``Central`` keeps its own central role beside it.
///
/// Adding or removing services indicates Service Changed (Core 5.4 Vol 3 Part G 7.1) to
/// every connected central subscribed to it; a confirmation makes that central
/// change-aware again.
///
/// A bonded central's CCCDs and Client Supported Features are saved beside its bond (the
/// policy's ``BondStore``, under ``bondedStateAttachment``) whenever they change, and
/// restored when it comes back and encrypts with the bond (Part G 2.5.2.1, 3.3.3.3); not
/// before, since until then only its address says who it is. When the database changed
/// since they were saved, a central that had indications of Service Changed on is
/// indicated the whole range, 0x0001-0xFFFF (Part G 7.1).
public final class PeripheralManager: Sendable {
    /// What the manager did with value updates; zeros except the sent counts on a run whose
    /// centrals keep up.
    public struct Statistics: Sendable, Equatable {
        /// Values sent as notifications, one per value and central (several values in one
        /// Multiple Handle Value Notification count one each).
        public var notificationsSent = 0
        /// Notification PDUs refused because the link's outgoing queue was full (the caller was
        /// told with `false`).
        public var notificationsRefusedFull = 0
        public var indicationsConfirmed = 0
        /// Indications refused because the link already had its server's queue of them.
        public var indicationsRefusedFull = 0
        /// Indications that failed after being queued: link gone, no confirmation in time.
        public var indicationsFailed = 0
        /// Values not sent to a subscribed central because it enabled robust caching and is
        /// change-unaware (Part G 2.5.2.1: only Service Changed goes to it until it reads
        /// the Database Hash, meets Database Out Of Sync or confirms Service Changed). Not a
        /// refusal: `updateValue` still returns true for it.
        public var valuesWithheldFromChangeUnaware = 0
        /// Values not sent to a subscribed central because its link lacks what reading the
        /// value (or writing its CCCD) asks: encryption, an authenticated or Secure
        /// Connections key, a key size (``GATTRecipients/access``). A central subscribed
        /// before it was asked for that only where the application declared the CCCD open,
        /// or kept its CCCD while the database changed under it. Not a refusal either.
        public var valuesWithheldFromUnprotectedLinks = 0
        /// Events a full ``events()`` stream dropped (its oldest).
        public var droppedEvents = 0
        /// A bonded central's GATT state that could not be written to, or read from, the
        /// bond store (it then starts as a new client).
        public var bondedStateFailures = 0
        /// Bonded centrals' GATT states written to the bond store.
        public var bondedStatesSaved = 0
    }

    /// The name a bonded central's GATT state is kept under in the bond store.
    public static let bondedStateAttachment = "gatt-client.json"

    /// How many events an ``events()`` stream keeps for a reader that falls behind.
    public static let eventBufferLimit = 256

    public let host: PeripheralHost
    public let store: GATTServerStore
    private let serving: PeripheralServerStore
    private let listeners: Listeners<PeripheralManagerEvent>
    /// Internal, not private: the reconnect tests check that every link's entries go.
    let links: Lock<Links>
    private let forwarding = Lock<Task<Void, Never>?>(nil)
    /// Held across a bonded state's save (read, compare, write).
    private let saving = Lock(())

    struct Links: Sendable {
        var servers: [UInt16: ATTServer] = [:]
        /// Indications handed to each link's server and not yet answered.
        var indicationsPending: [UInt16: Int] = [:]
        /// Links whose queue refused an update; each is watched until it drains.
        var waitingForRoom: Set<UInt16> = []
        /// An update was refused since the last ready event.
        var refused = false
        /// Links whose bonded state was restored (once per link).
        var restored: Set<UInt16> = []
        /// What the bond store holds for each bonded central, by identity: read once when
        /// the manager starts and kept with every save, so restoring needs no file I/O
        /// (it may run on the server's path of a request) and a write that changes nothing
        /// (a CCCD rewritten with its value) costs no file write. One entry per bond.
        var saved: [DeviceAddress: GATTBondedClientState] = [:]
        var statistics = Statistics()
    }

    /// - Parameters:
    ///   - advertising: what ``startAdvertising()`` puts on the air, and how many centrals
    ///     may connect.
    ///   - services: the application's services, laid out after the GAP and GATT services
    ///     the store adds (``GATTServerConfiguration``).
    ///   - att: each link's ATT server's bounds.
    ///   - authorizer: decides attributes whose permissions require authorization.
    public init(
        central: Central, advertising: PeripheralHost.Options, services: [GATTDatabase.Service] = [],
        gatt: GATTServerConfiguration = GATTServerConfiguration(), att: ATTServer.Configuration = ATTServer.Configuration(),
        authorizer: GATTServerStore.Authorizer? = nil
    ) throws(PeripheralManagerError) {
        do { store = try GATTServerStore(services: services, configuration: gatt, authorizer: authorizer) } catch { throw .layout(error) }
        let listeners = Listeners<PeripheralManagerEvent>(bufferLimit: Self.eventBufferLimit)
        let links = Lock(Links())
        let report: @Sendable (PeripheralManagerEvent) -> Void = { event in
            let dropped = listeners.yield(event)
            if dropped > 0 { HostLog.droppedEvents(dropped, total: links.withLock { $0.statistics.droppedEvents += dropped; return $0.statistics.droppedEvents }) }
        }
        let serving = PeripheralServerStore(store: store, report: report)
        let signatures = central.security.bonds.map { SignedWriteVerifier(bonds: $0).verifier }
        do {
            host = try PeripheralHost(central: central, options: advertising) { setup in
                let server = ATTServer(
                    bearer: setup.bearer, store: serving, bearerID: setup.handle, peer: setup.identity,
                    security: setup.security, configuration: att, verifier: signatures)
                server.observeMTU { [weak server] mtu in
                    report(.mtu(Request(bearer: setup.handle, central: server?.context.peer, handle: 0), mtu: mtu))
                }
                // A new link on this handle starts with nothing of an earlier one's, even when
                // the earlier one's disconnection is handled after this (it then finds
                // another server on the handle and leaves it alone).
                links.withLock { links in
                    links.servers[setup.handle] = server
                    links.restored.remove(setup.handle)
                    links.indicationsPending[setup.handle] = nil
                }
                return server
            }
        } catch {
            throw .host(error)
        }
        self.serving = serving
        self.listeners = listeners
        self.links = links
        serving.setHooks(
            clientStateChanged: { [weak self] context in self?.saveBondedState(context, peer: context.peer) },
            // Also before each request of an encrypted link, so a central's first request
            // after encrypting already finds its state (and robust caching judges it by that).
            admitting: { [weak self] context in
                if context.security.isEncrypted { self?.restoreBondedState(bearer: context.bearer) }
            })
        loadBondedStates()
        let events = host.events()
        let task = Task { [weak self] in
            for await event in events {
                switch event {
                case let .disconnected(remote, _):
                    // A handle the controller already gave a new link keeps that link's server.
                    links.withLock { links in
                        if let server = remote.server, links.servers[remote.handle] === server {
                            links.servers[remote.handle] = nil
                            links.indicationsPending[remote.handle] = nil
                            links.restored.remove(remote.handle)
                        }
                    }
                case let .encryptionChanged(remote, true):
                    // Before the event goes out, so its reader finds the state in place,
                    // for a central that sends nothing and waits for notifications.
                    self?.restoreBondedState(bearer: remote.handle)
                case let .paired(remote, _, bondSaved: true):
                    if let context = remote.server?.context { self?.saveBondedState(context, peer: remote.identity) }
                default:
                    break
                }
                report(.host(event))
            }
        }
        forwarding.withLock { $0 = task }
    }

    deinit { forwarding.withLock { $0 }?.cancel() }

    /// Events from now on, for as long as the stream is iterated; a reader that falls
    /// behind loses the oldest beyond ``eventBufferLimit`` (counted).
    public func events() -> AsyncStream<PeripheralManagerEvent> { listeners.stream() }

    public var statistics: Statistics { links.withLock { $0.statistics } }
    /// The database as served now, with its handles.
    public var database: GATTDatabase { store.database }
    /// The centrals connected now, in handle order.
    public var centrals: [RemoteCentral] { host.links }
    public var isAdvertising: Bool { host.isAdvertising }

    /// Starts advertising as ``PeripheralHost/Options`` says, and keeps it going between
    /// connections until ``stopAdvertising()``.
    public func startAdvertising() async throws(PeripheralHostError) { try await host.start() }

    /// Stops advertising; connected centrals stay.
    public func stopAdvertising() async { await host.stop() }

    // MARK: Services

    /// Adds services after the last handle and returns them with their handles; connected
    /// centrals subscribed to Service Changed are indicated the new range.
    @discardableResult
    public func add(_ services: [GATTDatabase.Service]) throws(GATTLayoutError) -> [GATTDatabase.Service] {
        guard let change = try store.addServices(services) else { return [] }
        indicate(change)
        return store.database.services.filter { change.changedHandles.contains($0.handles.lowerBound) }
    }

    /// Removes the service whose declaration is at `handle` (not the GAP or GATT service
    /// the store added); subscribed connected centrals are indicated the removed range.
    public func remove(serviceAt handle: UInt16) throws(GATTLayoutError) {
        indicate(try store.removeService(at: handle))
    }

    private func indicate(_ change: GATTServerChange) {
        guard let handle = change.serviceChangedHandle else { return }
        for bearer in change.subscribers {
            indicateServiceChanged(change.changedHandles, handle: handle, bearer: bearer)
        }
    }

    /// Indicates `range` on the Service Changed characteristic at `handle` to `bearer`.
    private func indicateServiceChanged(_ range: ClosedRange<UInt16>, handle: UInt16, bearer: UInt16) {
        guard let server = links.withLock({ $0.servers[bearer] }) else { return }
        // The first and last changed handle, little-endian (Part G 7.1).
        let value = [range.lowerBound, range.upperBound].flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        Task { [weak self] in
            // An unconfirmed indication leaves the central change-unaware: its next
            // request is answered Database Out Of Sync (robust caching) instead.
            let confirmed = (try? await server.indicate(handle: handle, value: value)) != nil
            guard let self else { return }
            let peer = server.context.peer
            if confirmed {
                store.serviceChangedConfirmed(server.context)
                saveBondedState(server.context, peer: peer)
            }
            let request = Request(bearer: bearer, central: peer, handle: handle, characteristic: GATTUUID.serviceChanged, valueHandle: handle)
            report(.serviceChanged(request, range: range, confirmed: confirmed))
        }
    }

    // MARK: Bonded centrals

    /// Writes what the bond keeps of the client of `context`, when `peer` is bonded and the
    /// link holds the bond's state: encrypted, and either paired on this link (what it
    /// wrote before the bond was made is kept with it) or given the bond's saved state
    /// back (``restoreBondedState(bearer:)``). Not before: a central's writes before it
    /// encrypts are not yet the bonded device's (anyone can use its address), and saving
    /// them would replace the bond's CCCDs and change-awareness with a fresh link's.
    /// Nor after the link closed, or for another central given the same handle since: the
    /// state is read for the server's own bearer (its instance), inside the lock.
    private func saveBondedState(_ context: ATTServerContext, peer: DeviceAddress?) {
        let bearer = context.bearer
        guard let bonds = host.central.security.bonds, let peer, let bond = bonds.bond(for: peer),
            let remote = host.links.first(where: { $0.handle == bearer }), remote.identity == peer, remote.isEncrypted,
            let server = remote.server, server.closedReason == nil,
            remote.pairedOnThisLink || links.withLock({ $0.servers[bearer] === server && $0.restored.contains(bearer) })
        else { return }
        // One save at a time, the state read inside: two saves racing (a CCCD write's on
        // the server's task, a change of awareness's on its own) must not leave the older
        // state in the file.
        saving.withLock { _ in
            guard let state = store.bondedState(context) else { return }
            guard links.withLock({ $0.saved[bond.peer] != state }) else { return }
            do {
                try bonds.setAttachment(BondedClientStateFile.encode(state), name: Self.bondedStateAttachment, for: bond.peer)
                links.withLock { links in
                    links.statistics.bondedStatesSaved += 1
                    links.saved[bond.peer] = state
                }
            } catch {
                links.withLock { $0.statistics.bondedStateFailures += 1 }
            }
        }
    }

    /// Reads every bond's saved state into memory (once, at the start).
    private func loadBondedStates() {
        guard let bonds = host.central.security.bonds else { return }
        for bond in bonds.bonds {
            let state: GATTBondedClientState?
            do {
                guard let bytes = try bonds.attachment(Self.bondedStateAttachment, for: bond.peer) else { continue }
                state = BondedClientStateFile.decode(bytes)
            } catch {
                state = nil
            }
            guard let state else {
                links.withLock { $0.statistics.bondedStateFailures += 1 }
                continue
            }
            links.withLock { $0.saved[bond.peer] = state }
        }
    }

    /// The link `bearer` is encrypted with a bond: the central's saved state comes back
    /// (once per link, from memory), and Service Changed when the database changed since.
    /// Not on a link whose central paired on it: that pairing made a new bond, and what
    /// the link holds is newer than anything saved.
    private func restoreBondedState(bearer: UInt16) {
        guard let bonds = host.central.security.bonds, let remote = host.links.first(where: { $0.handle == bearer }),
            remote.isEncrypted, !remote.pairedOnThisLink, let bond = bonds.bond(for: remote.identity)
        else { return }
        // Marked restored even when the bond has nothing saved yet: the link holds the
        // bond's state from here, and what the central writes now is saved.
        let saved: GATTBondedClientState? = links.withLock { links in
            guard links.servers[bearer] === remote.server, links.restored.insert(bearer).inserted else { return nil }
            return links.saved[bond.peer]
        }
        guard let saved else { return }
        // The link may close while this runs on the event task, before its disconnection
        // is handled: the store then takes nothing from its server's bearer.
        guard let server = remote.server else { return }
        store.restoreBondedState(saved, context: server.context)
        guard let restored = store.bondedState(server.context), !restored.wasChangeAware, let handle = store.database.characteristic(GATTUUID.serviceChanged)?.valueHandle,
            ClientCharacteristicConfiguration(rawValue: restored.configurations[handle] ?? 0).contains(.indication)
        else { return }
        indicateServiceChanged(0x0001...0xFFFF, handle: handle, bearer: bearer)
    }

    private func report(_ event: PeripheralManagerEvent) {
        let dropped = listeners.yield(event)
        if dropped > 0 { HostLog.droppedEvents(dropped, total: links.withLock { $0.statistics.droppedEvents += dropped; return $0.statistics.droppedEvents }) }
    }

    // MARK: Values

    /// Sets the characteristic's stored value (when it has one rather than a handler) and
    /// sends it to the centrals subscribed to it: a notification or an indication, as each
    /// one's CCCD asks (notification when both), cut to its ATT_MTU - 3. Not to a central
    /// whose link could not read the value (counted in
    /// ``Statistics/valuesWithheldFromUnprotectedLinks``).
    ///
    /// Returns false when a link's queue had no room for it (for a notification its
    /// outgoing L2CAP queue, or on hci-raw the server's queue in front of the kernel's
    /// socket; for an indication its server's indication queue): that central did
    /// not get this value, the others did. Nothing waits in between:
    /// ``PeripheralManagerEvent/readyToUpdateSubscribers`` comes once every such queue has
    /// room again, as `peripheralManagerIsReady(toUpdateSubscribers:)` does.
    ///
    /// - Parameters:
    ///   - centrals: only these (by ``RemoteCentral/handle``); nil: all subscribed.
    ///   - kind: `.notification` or `.indication`: only that, to the centrals whose CCCD
    ///     asks for it (a central that enabled both gets what is asked); nil: as each asks.
    @discardableResult
    public func updateValue(
        _ value: [UInt8], for valueHandle: UInt16, onSubscribedCentrals centrals: [RemoteCentral]? = nil,
        as kind: ClientCharacteristicConfiguration? = nil
    ) -> Bool {
        store.setValue(value, at: valueHandle)
        var delivered = true
        forEachRecipient(of: valueHandle, among: centrals, as: kind) { bearer, server, configuration in
            let sent = configuration.contains(.notification)
                ? notify(server, bearer: bearer) { () throws(ATTServerError) in try server.notify(handle: valueHandle, value: value); return 1 } != nil
                : indicate(server, bearer: bearer, handle: valueHandle, value: value)
            delivered = delivered && sent
        }
        return delivered
    }

    /// Sets several characteristics' stored values and sends them as
    /// ``updateValue(_:for:onSubscribedCentrals:as:)`` sends one, but a central that enabled
    /// Multiple Handle Value Notifications (bit 2 of its Client Supported Features, Core 5.4
    /// Vol 3 Part G 7.2) gets the notifications due to it in as few Multiple Handle Value
    /// Notifications (Vol 3 Part F 3.4.7.4) as its ATT_MTU allows, in the order given, each
    /// value whole; a value that fits none beside another goes as a Handle Value
    /// Notification, cut to ATT_MTU - 3. Other centrals get one notification per value.
    /// Indications go one by one, as they must. Each value's notifications are counted in
    /// ``Statistics/notificationsSent``.
    ///
    /// Returns false when a link's queue had no room: that central did not get its values
    /// from the refused PDU on (those before it went), the others got theirs; send the
    /// values again after ``PeripheralManagerEvent/readyToUpdateSubscribers``.
    @discardableResult
    public func updateValues(
        _ values: [(valueHandle: UInt16, value: [UInt8])], onSubscribedCentrals centrals: [RemoteCentral]? = nil,
        as kind: ClientCharacteristicConfiguration? = nil
    ) -> Bool {
        var delivered = true
        var notifications: [UInt16: (server: ATTServer, values: [MultipleHandleValueNotification.HandleLengthValue])] = [:]
        for (valueHandle, value) in values {
            store.setValue(value, at: valueHandle)
            forEachRecipient(of: valueHandle, among: centrals, as: kind) { bearer, server, configuration in
                guard configuration.contains(.notification) else {
                    delivered = indicate(server, bearer: bearer, handle: valueHandle, value: value) && delivered
                    return
                }
                notifications[bearer, default: (server, [])].values.append(.init(attributeHandle: valueHandle, attributeValue: value))
            }
        }
        for (bearer, batch) in notifications.sorted(by: { $0.key < $1.key }) {
            let (server, values) = batch
            let multiple = values.count > 1 && store.acceptsMultipleNotifications(server.context)
            var next = 0
            while next < values.count {
                let first = values[next]
                let sent = notify(server, bearer: bearer) { () throws(ATTServerError) in
                    guard multiple else {
                        try server.notify(handle: first.attributeHandle, value: first.attributeValue)
                        return 1
                    }
                    return try server.notifyMultiple(Array(values[next...]))
                }
                guard let sent else { delivered = false; break }
                guard sent > 0 else { break }  // the link is going
                next += sent
            }
        }
        return delivered
    }

    /// Calls `body` for each central `valueHandle`'s value goes to now (among `centrals`,
    /// nil: all): subscribed to it (with `kind` when given; `body` gets what its CCCD asks
    /// of that), on a link that could read the value. Counts the ones withheld.
    private func forEachRecipient(
        of valueHandle: UInt16, among centrals: [RemoteCentral]?, as kind: ClientCharacteristicConfiguration?,
        _ body: (UInt16, ATTServer, ClientCharacteristicConfiguration) -> Void
    ) {
        let only = centrals.map { Set($0.map(\.handle)) }
        let recipients = store.recipients(of: valueHandle)
        let counted = recipients.withheld.filter { only?.contains($0) ?? true }
        if !counted.isEmpty {
            links.withLock { links in links.statistics.valuesWithheldFromChangeUnaware += counted.count { links.servers[$0] != nil } }
        }
        for subscriber in recipients.subscribers where only?.contains(subscriber.bearer) ?? true {
            let bearer = subscriber.bearer
            let configuration = kind.map(subscriber.configuration.intersection) ?? subscriber.configuration
            guard !configuration.isEmpty else { continue }
            guard let server = links.withLock({ $0.servers[bearer] }) else { continue }
            guard recipients.access.denial(on: server.context.security) == nil else {
                links.withLock { $0.statistics.valuesWithheldFromUnprotectedLinks += 1 }
                continue
            }
            body(bearer, server, configuration)
        }
    }

    /// Sends what `send` sends to `bearer` (it returns how many values went) and counts
    /// them; 0 when the link is going, nil when its queue was full: the caller then hears
    /// ``PeripheralManagerEvent/readyToUpdateSubscribers`` once it has room.
    private func notify(_ server: ATTServer, bearer: UInt16, _ send: () throws(ATTServerError) -> Int) -> Int? {
        do {
            let sent = try send()
            links.withLock { $0.statistics.notificationsSent += sent }
            return sent
        } catch .outgoingQueueFull {
            let watch = links.withLock { links in
                links.statistics.notificationsRefusedFull += 1
                links.refused = true
                return links.waitingForRoom.insert(bearer).inserted
            }
            if watch {
                Task { [weak self] in
                    await server.waitUntilSent()
                    self?.roomAgain(bearer)
                }
            }
            return nil
        } catch {
            // The link is going: its disconnection is reported, and it has no subscribers then.
            return 0
        }
    }

    private func indicate(_ server: ATTServer, bearer: UInt16, handle: UInt16, value: [UInt8]) -> Bool {
        let limit = server.configuration.indicationQueueLimit
        let admitted = links.withLock { links in
            guard links.indicationsPending[bearer, default: 0] <= limit else {
                links.statistics.indicationsRefusedFull += 1
                links.refused = true
                links.waitingForRoom.insert(bearer)
                return false
            }
            links.indicationsPending[bearer, default: 0] += 1
            return true
        }
        guard admitted else { return false }
        Task { [weak self] in
            let confirmed = (try? await server.indicate(handle: handle, value: value)) != nil
            self?.indicationAnswered(bearer, confirmed: confirmed)
        }
        return true
    }

    private func indicationAnswered(_ bearer: UInt16, confirmed: Bool) {
        let room = links.withLock { links in
            if confirmed { links.statistics.indicationsConfirmed += 1 } else { links.statistics.indicationsFailed += 1 }
            if let pending = links.indicationsPending[bearer] { links.indicationsPending[bearer] = max(0, pending - 1) }
            return links.waitingForRoom.contains(bearer)
        }
        if room { roomAgain(bearer) }
    }

    /// `bearer`'s queue has room: once no link is waiting, the caller hears it may send again.
    private func roomAgain(_ bearer: UInt16) {
        let ready = links.withLock { links in
            links.waitingForRoom.remove(bearer)
            guard links.waitingForRoom.isEmpty, links.refused else { return false }
            links.refused = false
            return true
        }
        if ready { report(.readyToUpdateSubscribers) }
    }
}

/// Why a ``PeripheralManager`` could not be made.
public enum PeripheralManagerError: Error, Sendable, CustomStringConvertible {
    case host(PeripheralHostError)
    /// The services could not be laid out (a handle range overflows, a bad include...).
    case layout(GATTLayoutError)

    public var description: String {
        switch self {
        case let .host(error): "\(error)"
        case let .layout(error): "the services could not be laid out: \(error)"
        }
    }
}
