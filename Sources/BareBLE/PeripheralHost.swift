import ATT
import BluetoothCore
import Bonding
import HCI
import KernelHost
import L2CAP
import SMP

/// The peripheral role on a ``Central``'s controller, below a GATT server: connectable
/// advertising, and for each central that connects, a ``RemoteCentral`` with the same
/// per-link stack the Central builds for its own connections (``HostLink``: ATT bearer on
/// L2CAP, SMP, bonds saved to the policy's store), SMP in the responder role.
///
/// - Links are built on the transport's reader thread as the connection completes
///   (``Connector``'s acceptor), so SMP answers a bonded central's LTK request and the
///   server handler sees the first ATT PDU, however quickly the central starts.
/// - At most ``Options/maximumLinks`` centrals at once. Below that, advertising resumes
///   after each connection (the controller ends connectable advertising when a central
///   connects: Core Vol 6 Part B 4.4.2) and after each disconnection, when
///   ``Options/readvertises``. A connection above the limit (a race with the stop) is
///   refused with 0x14 and counted.
/// - With ``SecurityPolicy/privacy`` the advertising address is a resolvable private
///   address of the bond store's IRK, new at each start and every
///   ``Options/addressRotation``; SMP binds pairings to that address. A central's RPA is
///   resolved to its bond with the IRKs the store holds (``RemoteCentral/identity``).
/// - Beside the kernel (`hci-raw:N`) the kernel makes the links: we advertise with HCI
///   commands on the raw channel, the kernel's ATT listening socket (CID 4) hands each
///   central's ATT channel over, and each link is a ``KernelLink`` (its ATT bearer is
///   that socket; the kernel runs SMP as responder). See `PeripheralHost+Kernel.swift`.
public final class PeripheralHost: Sendable {
    public struct Options: Sendable {
        /// Connectable kinds only; `ownAddress` is replaced by our RPA under privacy.
        public var advertising: AdvertisingParameters
        public var data: AdvertisingData
        public var scanResponse: AdvertisingData?
        /// How many centrals may be connected at once (1 ... 64). Controllers have their
        /// own limit; one that refuses more simply stops accepting.
        public var maximumLinks: Int
        /// Advertise again after a connection (while below the limit) and after a
        /// disconnection. Off: advertising stops at the first connection.
        public var readvertises: Bool
        /// How long one RPA stays on the air under privacy (15 minutes recommended).
        public var addressRotation: Duration

        public init(
            advertising: AdvertisingParameters = AdvertisingParameters(kind: .connectableUndirected),
            data: AdvertisingData, scanResponse: AdvertisingData? = nil, maximumLinks: Int = 4,
            readvertises: Bool = true, addressRotation: Duration = .seconds(15 * 60)
        ) {
            self.advertising = advertising
            self.data = data
            self.scanResponse = scanResponse
            self.maximumLinks = maximumLinks
            self.readvertises = readvertises
            self.addressRotation = addressRotation
        }

        /// The upper bound of ``maximumLinks``, the bound of the links table (centrals
        /// decide how many connect). Controllers take far fewer links; one at its own
        /// limit simply stops accepting connections.
        public static let linkLimit = 64
    }

    /// What a new link looks like to the ATT server, handed to the server attachment
    /// before the link's bearer delivers anything.
    public struct LinkSetup: Sendable {
        public let handle: UInt16
        public let address: DeviceAddress
        /// The bonded identity when the central's address resolves to a bond.
        public let identity: DeviceAddress
        /// The link's bearer, for the server's responses, notifications and indications.
        public let bearer: any ATTBearer
        /// The link's protection as it comes up (unencrypted; whether a bond holds a key).
        /// The host updates the server's copy at every encryption change and pairing.
        public let security: ATTLinkSecurity
    }

    /// Returns the ATT server of one link, made on `LinkSetup/bearer` (nil: the central's
    /// requests are counted and ignored). Called on the transport's reader thread as the
    /// link comes up: build, do not wait.
    public typealias ServerAttachment = @Sendable (LinkSetup) -> ATTServer?

    /// What the host dropped or refused; zeros on a healthy run except ``advertisingStarts``.
    public struct Statistics: Sendable, Equatable {
        /// Connections refused because ``Options/maximumLinks`` were up.
        public var refusedOverLimit = 0
        /// Connections whose stack could not be built (disconnected at once).
        public var refusedBrokenLinks = 0
        /// Events a full ``events()`` stream dropped (its oldest).
        public var droppedEvents = 0
        /// Times advertising went on the air (the first start included).
        public var advertisingStarts = 0
        public var advertisingFailures = 0
    }

    /// How many events an ``events()`` stream keeps for a reader that falls behind.
    public static let eventBufferLimit = 256

    public let central: Central
    public let options: Options
    public let advertiser: Advertiser
    let source: LinkSource
    let server: ServerAttachment?
    /// Removes our acceptor (and no other) when the host goes away.
    private let acceptorToken = Lock<UInt64?>(nil)

    struct State: Sendable {
        var links: [UInt16: RemoteCentral] = [:]
        var running = false
        var broadcast: Broadcast?
        /// What ends a running set without the Advertiser necessarily knowing: connections
        /// and controller resets (a set started while a hardware error's reset was pending is
        /// wiped by it, unannounced). A set started before the latest one is spent.
        var setEndings = 0
        var broadcastStartedAt = 0
        /// The address of the latest set, which a new connection was made to.
        var advertisingAddress: DeviceAddress?
        var statistics = Statistics()
        var reconsider: AsyncStream<Void>.Continuation?
        var loop: Task<Void, Never>?
        var resets: Task<Void, Never>?
    }

    let state = Lock(State())
    private let listeners = Listeners<PeripheralHostEvent>(bufferLimit: PeripheralHost.eventBufferLimit)

    /// Takes over accepting `central`'s incoming connections (one host per Central).
    /// `server` attaches the ATT server to each link.
    public init(central: Central, options: Options, server: ServerAttachment? = nil) throws(PeripheralHostError) {
        guard (1...Options.linkLimit).contains(options.maximumLinks) else {
            throw .invalidOptions("maximumLinks \(options.maximumLinks) is outside 1 ... \(Options.linkLimit)")
        }
        guard options.advertising.kind == .connectableUndirected else {
            throw .invalidOptions("a PeripheralHost advertises connectably; \(options.advertising.kind) advertising accepts no connection (use Advertiser for it)")
        }
        if central.security.privacy, central.security.bonds == nil { throw .privacyNeedsBondStore }
        switch central.host {
        case let .controller(stack):
            source = .controller(stack)
        case let .kernel(adapter):
            // The store's keys into the kernel before any central can connect, and the keys
            // of its pairings kept from then on.
            _ = central.kernelBonds(adapter)
            source = .kernel(try PeripheralHost.kernelAcceptance(adapter: adapter.index, policy: central.security))
        }
        self.central = central
        self.options = options
        self.server = server
        advertiser = Advertiser(controller: central.controller)
        switch source {
        case let .controller(stack):
            let channels = stack.channels
            guard let token = stack.connector.setAcceptor({ [weak self] connection in self?.accept(connection, channels: channels) }) else {
                throw .alreadyAccepting
            }
            acceptorToken.withLock { $0 = token }
        case let .kernel(acceptance):
            acceptance.start { [weak self, weak acceptance] socket in
                guard let self, let acceptance else { return socket.close() }
                accept(socket, handle: acceptance.handle(for: socket))
            }
        }
    }

    deinit {
        switch source {
        case let .controller(stack):
            if let token = acceptorToken.withLock({ $0 }) { stack.connector.removeAcceptor(token) }
        case let .kernel(acceptance):
            acceptance.close()
        }
        state.withLock { state in
            state.loop?.cancel()
            state.resets?.cancel()
            state.reconsider?.finish()
        }
    }

    /// The centrals connected now, in handle order.
    public var links: [RemoteCentral] { state.withLock { Array($0.links.values) }.sorted { $0.handle < $1.handle } }
    public var statistics: Statistics { state.withLock { $0.statistics } }
    /// The address the latest advertising went out from (our RPA under privacy).
    public var advertisingAddress: DeviceAddress? { state.withLock { $0.advertisingAddress } }
    public var isAdvertising: Bool { state.withLock { $0.broadcast?.isAdvertising ?? false } }

    /// Events from now on, for as long as the stream is iterated; a reader that falls
    /// behind loses the oldest beyond ``eventBufferLimit`` (counted in
    /// ``Statistics/droppedEvents``).
    public func events() -> AsyncStream<PeripheralHostEvent> { listeners.stream() }

    // MARK: Advertising

    /// Starts advertising (throws what the controller refused) and keeps it going as
    /// ``Options/readvertises`` says until ``stop()``. Starting a running host does nothing.
    public func start() async throws(PeripheralHostError) {
        let (ticks, reconsider) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let claimed = state.withLock { state in
            guard !state.running, state.loop == nil else { return false }
            state.running = true
            return true
        }
        guard claimed else { return }
        watchForResets()
        do throws(AdvertisingError) {
            try await startBroadcast()
        } catch {
            state.withLock { state in
                state.running = false
                state.resets?.cancel()
                state.resets = nil
            }
            throw .advertising(error)
        }
        // One task makes every later change, so two of them never overlap on the controller.
        let loop = Task { [weak self] in
            for await _ in ticks {
                guard let self else { return }
                await self.adjustAdvertising()
            }
            await self?.adjustAdvertising()
        }
        state.withLock { state in
            state.reconsider = reconsider
            state.loop = loop
        }
        // A connection during the first start found no loop to tell: look once now.
        reconsider.yield()
    }

    /// Stops advertising; connected centrals stay. ``start()`` may be called again.
    public func stop() async {
        let loop = state.withLock { state in
            state.running = false
            state.reconsider?.finish()
            state.reconsider = nil
            state.resets?.cancel()
            state.resets = nil
            defer { state.loop = nil }
            return state.loop
        }
        // The loop's last round takes the set off the air.
        await loop?.value
        if loop == nil { await adjustAdvertising() }
    }

    private func startBroadcast() async throws(AdvertisingError) {
        let identity = central.security.privacy ? central.security.bonds?.local : nil
        let seen = state.withLock { $0.setEndings }
        let broadcast: Broadcast
        do {
            broadcast = try await Broadcast.start(options, advertiser: advertiser, identity: identity)
        } catch {
            state.withLock { $0.statistics.advertisingFailures += 1 }
            throw error
        }
        state.withLock { state in
            state.broadcast = broadcast
            state.broadcastStartedAt = seen
            state.advertisingAddress = broadcast.address
            state.statistics.advertisingStarts += 1
        }
        emit(.advertising(broadcast.address))
    }

    /// Brings the air in line with the state: a set a connection ended (or one that a
    /// connection came in during its start) is replaced while below the limit.
    private func adjustAdvertising() async {
        let (current, spent, wanted) = state.withLock { state in
            let wanted = state.running && state.links.count < options.maximumLinks
            return (state.broadcast, state.setEndings > state.broadcastStartedAt, wanted)
        }
        if let current, spent || !current.isAdvertising || !wanted {
            // A set the controller ended is stopped without effect (Core Vol 4 Part E 7.8.9:
            // disabling disabled advertising has none).
            do throws(AdvertisingError) {
                try await current.stop()
            } catch {
                state.withLock { $0.statistics.advertisingFailures += 1 }
                emit(.advertisingFailed(error))
            }
            state.withLock { $0.broadcast = nil }
            guard wanted, options.readvertises else {
                emit(.advertisingStopped)
                return
            }
        }
        guard wanted, options.readvertises, state.withLock({ $0.broadcast == nil }) else { return }
        do throws(AdvertisingError) {
            try await startBroadcast()
        } catch {
            emit(.advertisingFailed(error))
        }
    }

    func reconsider() {
        _ = state.withLock { $0.reconsider }?.yield()
    }

    /// After a hardware error the driver resets the controller, which forgets every set,
    /// also one started between the error and the reset: once it is ready again the set
    /// is taken as spent and advertising starts afresh.
    private func watchForResets() {
        let statuses = central.controller.statusUpdates()
        let task = Task { [weak self] in
            var recovering = false
            for await status in statuses {
                switch status {
                case .recovering:
                    recovering = true
                case .ready where recovering:
                    recovering = false
                    self?.state.withLock { $0.setEndings += 1 }
                    self?.reconsider()
                default:
                    break
                }
            }
        }
        state.withLock { $0.resets = task }
    }

    // MARK: Links (on the transport's reader thread)

    private func accept(_ connection: Connection, channels: ChannelManager) {
        let (over, localAddress) = admission()
        guard !over else {
            refuse(connection, why: "\(options.maximumLinks) centrals are connected already (maximumLinks)")
            return
        }
        let link: HostLink
        do {
            link = try HostLink(
                connection: connection, channels: channels, policy: central.security, attempts: central.attempts,
                localAddress: localAddress.flatMap { $0.type == .random ? $0 : nil },
                pairings: { [weak self, weak connection] result, saved in
                    guard let connection else { return }
                    self?.pairingEnded(on: connection, result, saved: saved)
                },
                encryption: { [weak self, weak connection] event in
                    guard let connection else { return }
                    self?.encryptionChanged(on: connection, event)
                })
        } catch {
            state.withLock { $0.statistics.refusedBrokenLinks += 1 }
            refuse(connection, why: "\(error)")
            return
        }
        register(link) { $0.close() }
    }

    /// A new link: counts as the end of the set on the air; whether it is over the limit,
    /// and the address it was made to.
    func admission() -> (over: Bool, localAddress: DeviceAddress?) {
        state.withLock { state in
            state.setEndings += 1
            let over = state.links.count >= options.maximumLinks
            if over { state.statistics.refusedOverLimit += 1 }
            // The set on the air now (under privacy its RPA may have rotated since the start).
            return (over, state.broadcast?.address ?? state.advertisingAddress)
        }
    }

    /// Gives an accepted link its ATT server and client, reports it, and watches for its
    /// end; `ended` releases what the link holds below before the end is reported.
    @discardableResult
    func register<Link: AcceptedLink>(_ link: Link, ended release: @escaping @Sendable (Link) -> Void) -> RemoteCentral {
        let attServer = server?(LinkSetup(
            handle: link.handle, address: link.peer, identity: link.identity, bearer: link.bearer,
            security: link.linkSecurity))
        let att = link.makeATTClient(server: attServer)
        let remote = RemoteCentral(link: link, att: att, server: attServer) { [weak self] event in self?.emit(event) }
        state.withLock { $0.links[link.handle] = remote }
        emit(.connected(remote))
        Task { [weak self] in
            let reason = (try? await link.disconnection()) ?? .unspecifiedError
            release(link)
            self?.ended(remote, reason: reason)
        }
        reconsider()
        return remote
    }

    private func refuse(_ connection: Connection, why: String) {
        Task { try? await connection.disconnect(reason: .remoteDeviceTerminatedConnectionDueToLowResources) }
        reportRefused(connection.peer, why: why)
    }

    /// A link that was let go at once: reported, and advertising reconsidered.
    func reportRefused(_ peer: DeviceAddress, why: String) {
        emit(.refused(peer, why: why))
        reconsider()
    }

    private func ended(_ remote: RemoteCentral, reason: HCIErrorCode) {
        state.withLock { state in
            if state.links[remote.handle] === remote { state.links[remote.handle] = nil }
        }
        emit(.disconnected(remote, reason: reason))
        reconsider()
    }

    func remote(_ handle: UInt16) -> RemoteCentral? { state.withLock { $0.links[handle] } }

    /// The central on `connection` itself: a late report of a link that ended must not be
    /// told of the next central the controller gave its handle (its pairing would count as
    /// made on that link, and its bond state saved from it).
    private func remote(on connection: Connection) -> RemoteCentral? {
        guard let remote = remote(connection.handle), remote.connection === connection else { return nil }
        return remote
    }

    private func pairingEnded(on connection: Connection, _ result: Result<PairingKeys, PairingError>, saved: Result<Bool, BondStoreError>?) {
        guard let remote = remote(on: connection) else { return }
        if case let .success(keys) = result { remote.securityChanged(pairedWith: keys) }
        switch result {
        case let .success(keys) where keys.method != nil:
            let stored = if case .success(true)? = saved { true } else { false }
            emit(.paired(remote, PairingKeysSummary(keys), bondSaved: stored))
        case .success:
            break  // stored keys, reported as the encryption change
        case let .failure(error):
            emit(.pairingFailed(remote, error))
        }
    }

    private func encryptionChanged(on connection: Connection, _ event: EncryptionEvent) {
        guard let remote = remote(on: connection) else { return }
        remote.securityChanged(pairedWith: nil)
        switch event {
        case .encrypted: emit(.encryptionChanged(remote, encrypted: true))
        case .unencrypted: emit(.encryptionChanged(remote, encrypted: false))
        case .failed: break  // SMP reports a failed pairing; a failed re-encryption drops the link
        }
    }

    func emit(_ event: PeripheralHostEvent) {
        let dropped = listeners.yield(event)
        if dropped > 0 { HostLog.droppedEvents(dropped, total: state.withLock { $0.statistics.droppedEvents += dropped; return $0.statistics.droppedEvents }) }
    }
}
