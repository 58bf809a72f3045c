import ANCS
import ATT
import BareBLE
import BluetoothCore
import GATT

/// A Notification Consumer on a ``Central``'s controller: shows an iPhone's notifications
/// and acts on them through ANCS, and follows its media through AMS.
///
/// Built on ``PeripheralManager``: it advertises connectably with ANCS solicited, serves
/// GAP, GATT, Device Information and one characteristic that needs encryption, and for
/// each phone that connects: secures the link (see ``Options/bondedEncryptionWait``),
/// discovers ANCS (following Service Changed when iOS publishes it only after pairing),
/// subscribes Data Source then Notification Source (pairing and retrying once on
/// Insufficient Authentication or Encryption), and drives an ``ANCSSession`` with a real
/// timer. It keeps going for as long as it runs: advertising resumes after every
/// disconnection, bonds live in the policy's bond store, and a phone's rotating address is
/// resolved to its bond by its IRK. App names learned on one link serve the next.
public final class ANCSConsumer: Sendable {
    public struct Options: Sendable {
        /// The name in the scan response and the GAP Device Name: what the phone lists.
        public var name: String
        public var session: ANCSSessionConfiguration
        /// Subscribe AMS when the phone has it.
        public var media: Bool
        /// How long a bonded phone gets to encrypt on its own before we send a Security
        /// Request.
        public var bondedEncryptionWait: Duration
        /// How long to wait for ANCS to appear (by Service Changed) on a secured link.
        public var serviceWait: Duration

        public init(
            name: String = "BareBLE", session: ANCSSessionConfiguration = ANCSSessionConfiguration(), media: Bool = true,
            bondedEncryptionWait: Duration = .seconds(5), serviceWait: Duration = .seconds(30)
        ) {
            self.name = name
            self.session = session
            self.media = media
            self.bondedEncryptionWait = bondedEncryptionWait
            self.serviceWait = serviceWait
        }
    }

    /// How many events an ``events()`` stream keeps for a reader that falls behind.
    public static let eventBufferLimit = 1024

    public let manager: PeripheralManager
    public let options: Options
    private let listeners = Listeners<ANCSConsumerEvent>(bufferLimit: ANCSConsumer.eventBufferLimit)
    /// Internal, not private: the soak checks that every link's entry goes.
    let state = Lock(State())

    struct State: Sendable {
        var links: [UInt16: ANCSLink] = [:]
        /// The app names each phone (by identity) gave, for its next link: never another
        /// phone's, which could otherwise name Messages "Bank" for this one. At most
        /// ``phonesRemembered`` phones, the one remembered longest ago forgotten first.
        var appNames: [DeviceAddress: AppNameCache] = [:]
        var appNamesOrder: [DeviceAddress] = []
        var loop: Task<Void, Never>?
        var droppedEvents = 0

        mutating func remember(_ names: AppNameCache, for phone: DeviceAddress) {
            appNamesOrder.removeAll { $0 == phone }
            appNamesOrder.append(phone)
            appNames[phone] = names
            while appNamesOrder.count > ANCSConsumer.phonesRemembered { appNames[appNamesOrder.removeFirst()] = nil }
        }
    }

    /// Phones whose app names are kept between their links.
    public static let phonesRemembered = 8

    public init(central: Central, options: Options = Options()) throws(ANCSConsumerError) {
        self.options = options
        let advertising: PeripheralHost.Options
        do { advertising = try AccessoryProfile.advertising(name: options.name) } catch {
            throw .advertising(.invalidOptions("the advertising data does not fit: \(error)"))
        }
        do {
            manager = try PeripheralManager(
                central: central, advertising: advertising, services: AccessoryProfile.services(name: options.name),
                gatt: GATTServerConfiguration(deviceName: options.name))
        } catch {
            throw .manager(error)
        }
    }

    deinit { state.withLock { $0.loop }?.cancel() }

    /// Events from now on; a reader that falls behind loses the oldest beyond
    /// ``eventBufferLimit`` (counted in ``droppedEvents``).
    public func events() -> AsyncStream<ANCSConsumerEvent> { listeners.stream() }

    public var droppedEvents: Int { state.withLock { $0.droppedEvents } }

    /// Starts advertising and serving phones until ``stop()``.
    public func start() async throws(ANCSConsumerError) {
        let events = manager.events()
        let loop = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                if case let .host(hostEvent) = event { self.handle(hostEvent) }
            }
        }
        state.withLock { $0.loop = loop }
        do { try await manager.startAdvertising() } catch { throw .advertising(error) }
    }

    /// Stops advertising and ends every link.
    public func stop() async {
        await manager.stopAdvertising()
        for central in manager.centrals { try? await central.disconnect() }
        state.withLock { $0.loop }?.cancel()
    }

    /// Asks the connected phone for a notification's positive or negative action; the
    /// outcome comes as ``ANCSConsumerEvent/actionFinished(uid:action:failure:)``. False
    /// when no phone has ANCS subscribed.
    @discardableResult
    public func perform(_ action: NotificationAction, uid: UInt32) -> Bool {
        guard let driver = currentLink(where: { $0.driver != nil })?.driver else { return false }
        driver.feed(.performAction(uid: uid, action: action))
        return true
    }

    /// Sends a remote command to the connected phone's media app.
    public func media(_ command: AMSRemoteCommand) async throws(ANCSConsumerError) {
        guard let link = currentLink(where: { $0.remoteCommandHandle != nil }), let handle = link.remoteCommandHandle else {
            throw .noMediaService
        }
        do { try await link.gatt.writeValue(handle, value: command.bytes) } catch { throw .mediaCommand(error) }
    }

    /// The newest link that satisfies `condition`.
    private func currentLink(where condition: (ANCSLink) -> Bool) -> ANCSLink? {
        state.withLock { $0.links.sorted { $0.key > $1.key }.map(\.value) }.first(where: condition)
    }

    private func emit(_ event: ANCSConsumerEvent) {
        let dropped = listeners.yield(event)
        if dropped > 0 { state.withLock { $0.droppedEvents += dropped } }
    }

    private func handle(_ event: PeripheralHostEvent) {
        switch event {
        case let .advertising(address):
            emit(.advertising(address))
        case let .connected(remote):
            emit(.connected(address: remote.address, identity: remote.identity))
            let hasBond = manager.host.central.security.bonds?.bond(for: remote.identity) != nil
            let link = ANCSLink(remote: remote, options: options, hasBond: hasBond) { [weak self] in self?.emit($0) }
            let appNames = state.withLock { state in
                state.links[remote.handle] = link
                return state.appNames[remote.identity] ?? AppNameCache()
            }
            Task { [weak self] in
                do throws(ANCSConsumerError) {
                    try await link.run(appNames: appNames)
                } catch {
                    // A link that is already gone says so with its disconnection.
                    if remote.isConnected, remote.att.closedReason == nil { self?.emit(.linkFailed(identity: remote.identity, error)) }
                }
            }
        case let .paired(remote, summary, bondSaved):
            emit(.paired(identity: summary.identity ?? remote.identity, bonded: bondSaved))
        case let .pairingFailed(remote, error):
            emit(.pairingFailed(identity: remote.identity, reason: "\(error)"))
        case let .encryptionChanged(remote, encrypted):
            guard encrypted else { return }
            state.withLock { $0.links[remote.handle] }?.encrypted()
            emit(.encrypted(identity: remote.identity))
        case let .disconnected(remote, reason):
            let link = state.withLock { state in
                // A handle the controller already gave a new link keeps that link.
                guard let link = state.links[remote.handle], link.remote === remote else { return nil as ANCSLink? }
                state.links[remote.handle] = nil
                return link
            }
            if let names = link?.end() { state.withLock { $0.remember(names.removingFallbacks(), for: remote.identity) } }
            emit(.disconnected(address: remote.address, identity: remote.identity, reason: "\(reason)"))
        case .advertisingStopped, .advertisingFailed, .refused, .mtuChanged:
            break
        }
    }
}
