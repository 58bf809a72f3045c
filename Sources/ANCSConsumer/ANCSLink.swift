import ANCS
import ATT
import BareBLE
import BluetoothCore
import GATT

/// One phone's link, brought to ANCS: secured, discovered, subscribed, and its session
/// driven until the link ends.
final class ANCSLink: PendingAnswersOwner {
    enum Wait: Hashable, Sendable { case encryption }

    struct State: Sendable {
        var answers = PendingAnswers<Wait, Void, Never>()
        var driver: SessionDriver?
        /// Kept for the link's life: releasing one ends its subscription.
        var subscriptions: [ATTSubscription] = []
        var remoteCommand: UInt16?
        var nowPlaying = AMSNowPlaying()
    }

    let remote: RemoteCentral
    let gatt: GATTClient
    let options: ANCSConsumer.Options
    let hasBond: Bool
    private let emit: @Sendable (ANCSConsumerEvent) -> Void
    private let state = Lock(State())

    init(remote: RemoteCentral, options: ANCSConsumer.Options, hasBond: Bool, emit: @escaping @Sendable (ANCSConsumerEvent) -> Void) {
        self.remote = remote
        gatt = GATTClient(att: remote.att)
        self.options = options
        self.hasBond = hasBond
        self.emit = emit
    }

    func withPendingAnswers<Result>(_ body: (inout PendingAnswers<Wait, Void, Never>) -> Result) -> Result {
        state.withLock { body(&$0.answers) }
    }

    /// The host saw the link encrypt.
    func encrypted() {
        for resumption in withPendingAnswers({ $0.fulfill(.encryption, with: .value(())) }) { resumption.resume() }
    }

    var driver: SessionDriver? { state.withLock { $0.driver } }
    var remoteCommandHandle: UInt16? { state.withLock { $0.remoteCommand } }

    /// Secures, discovers and subscribes; returns once ANCS (and AMS when present) is
    /// subscribed. The session then runs on the phone's notifications.
    func run(appNames: AppNameCache) async throws(ANCSConsumerError) {
        await exchangeMTU()
        try await secure()
        let database = try await discoverNotificationService()
        do {
            try await subscribe(database, appNames: appNames)
        } catch let error where error.isInsufficientSecurity {
            // The phone wants more protection than it had when we asked: pair, then once more.
            do { _ = try await remote.requestSecurity() } catch { throw .security(error) }
            do { try await subscribe(database, appNames: appNames) } catch { throw .subscription(error) }
        } catch {
            throw .subscription(error)
        }
        let media = options.media ? await subscribeMedia(database) : false
        emit(.subscribed(identity: remote.identity, media: media))
    }

    /// iOS exchanges the MTU as soon as it connects; a phone that has not (or not yet) is
    /// asked, because a Get App Attributes command carries a whole bundle identifier and
    /// every Data Source answer is cut at the MTU. A failure leaves 23 (the writes then go
    /// long) and is the link's to report when it is going.
    private func exchangeMTU() async {
        guard remote.att.mtu == ATTConstants.minimumLEMTU else { return }
        _ = try? await remote.exchangeMTU()
    }

    /// Encrypted already: nothing to do. A bonded phone encrypts with its stored key on its
    /// own right after connecting; a Security Request sent meanwhile makes iOS pair afresh
    /// (the pairing loop of other consumers), so it gets ``ANCSConsumer/Options/bondedEncryptionWait``
    /// first. A phone without a bond is asked at once (it also pairs when it meets our
    /// protected characteristic).
    private func secure() async throws(ANCSConsumerError) {
        if remote.isEncrypted { return }
        if hasBond {
            let id = withPendingAnswers { $0.expect(.encryption) }
            if remote.isEncrypted {
                withPendingAnswers { $0.forget(id) }
                return
            }
            if case .value = await wait(for: id, until: .now + options.bondedEncryptionWait) { return }
            if remote.isEncrypted { return }
        }
        do { _ = try await remote.requestSecurity() } catch { throw .security(error) }
    }

    /// iOS publishes ANCS to encrypted links only and announces it with Service Changed to
    /// a client subscribed to that. A discovery subscribes only at its end, so a
    /// publication in between is announced to nobody: when the first discovery lacks ANCS,
    /// a second one (subscribed throughout) looks again, then the client's rediscoveries
    /// are watched until ``ANCSConsumer/Options/serviceWait``.
    private func discoverNotificationService() async throws(ANCSConsumerError) -> GATTDatabase {
        for _ in 0..<2 {
            let database: GATTDatabase
            do { database = try await gatt.discover() } catch { throw .discovery(error) }
            if database.services.contains(where: { $0.uuid == ANCSUUID.service }) { return database }
        }
        let changes = gatt.databaseChanges
        let found = Task { () -> GATTDatabase? in
            for await change in changes where change.database.services.contains(where: { $0.uuid == ANCSUUID.service }) {
                return change.database
            }
            return nil
        }
        let timeout = DeadlineTimer.shared.schedule(after: options.serviceWait) { found.cancel() }
        let result = await found.value
        DeadlineTimer.shared.cancel(timeout)
        guard let result else { throw .noNotificationService }
        return result
    }

    /// Data Source first, so no answer is lost; then Notification Source, at which iOS
    /// sends every existing notification; then the session runs.
    private func subscribe(_ database: GATTDatabase, appNames: AppNameCache) async throws(GATTError) {
        guard let service = database.services.first(where: { $0.uuid == ANCSUUID.service }),
              let notificationSource = service.characteristics.first(where: { $0.uuid == ANCSUUID.notificationSource }),
              let controlPoint = service.characteristics.first(where: { $0.uuid == ANCSUUID.controlPoint }),
              let dataSource = service.characteristics.first(where: { $0.uuid == ANCSUUID.dataSource })
        else { throw .invalidResponse("the phone's ANCS lacks one of Notification Source, Control Point, Data Source") }
        let emit = emit
        let driver = SessionDriver(
            session: ANCSSession(configuration: options.session, appNames: appNames), gatt: gatt,
            controlPoint: controlPoint.valueHandle
        ) { output in
            switch output {
            case let .notification(notification): emit(.notification(notification))
            case let .actionFinished(uid, action, failure): emit(.actionFinished(uid: uid, action: action, failure: failure))
            case let .problem(problem): emit(.problem(problem))
            case .writeControlPoint: break
            }
        }
        state.withLock { $0.driver = driver }
        let data = try await gatt.subscribe(to: dataSource) { [weak driver] value in driver?.feed(.dataSource(value)) }
        state.withLock { $0.subscriptions.append(data) }
        let notifications = try await gatt.subscribe(to: notificationSource) { [weak driver] value in driver?.feed(.notificationSource(value)) }
        state.withLock { $0.subscriptions.append(notifications) }
    }

    /// AMS when the phone has it: the remote commands it takes and now-playing. A failure
    /// here leaves notifications working; it is told, not thrown.
    private func subscribeMedia(_ database: GATTDatabase) async -> Bool {
        guard let service = database.services.first(where: { $0.uuid == AMSUUID.service }),
              let remoteCommand = service.characteristics.first(where: { $0.uuid == AMSUUID.remoteCommand }),
              let entityUpdate = service.characteristics.first(where: { $0.uuid == AMSUUID.entityUpdate })
        else { return false }
        let emit = emit
        do throws(GATTError) {
            let commands = try await gatt.subscribe(to: remoteCommand) { value in emit(.mediaCommands(AMSRemoteCommand.supported(from: value))) }
            let updates = try await gatt.subscribe(to: entityUpdate) { [weak self] value in self?.mediaUpdate(value) }
            state.withLock { state in
                state.subscriptions += [commands, updates]
                state.remoteCommand = remoteCommand.valueHandle
            }
            for command in AMSEntityUpdateCommand.nowPlaying {
                try await gatt.writeValue(entityUpdate.valueHandle, value: command.bytes)
            }
            return true
        } catch {
            // A link that is already going says so with its disconnection.
            if remote.isConnected, remote.att.closedReason == nil { emit(.linkFailed(identity: remote.identity, .subscription(error))) }
            return false
        }
    }

    private func mediaUpdate(_ value: [UInt8]) {
        let playing: AMSNowPlaying? = state.withLock { state in
            guard let update = try? AMSEntityUpdate(bytes: value), state.nowPlaying.apply(update) else { return nil }
            return state.nowPlaying
        }
        if let playing { emit(.nowPlaying(playing)) }
    }

    /// The link ended.
    func end() -> AppNameCache? {
        let (driver, subscriptions) = state.withLock { state in
            defer { state.subscriptions = [] }
            return (state.driver, state.subscriptions)
        }
        for subscription in subscriptions { subscription.cancel() }
        for resumption in withPendingAnswers({ $0.fulfillAll(with: .expired) }) { resumption.resume() }
        driver?.end()
        return driver?.appNames
    }
}

extension GATTError {
    /// Insufficient Authentication or Encryption: pairing would let the request through.
    var isInsufficientSecurity: Bool {
        errorCode == .insufficientAuthentication || errorCode == .insufficientEncryption
    }
}
