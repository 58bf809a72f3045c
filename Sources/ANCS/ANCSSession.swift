import BluetoothCore

/// The Notification Consumer's side of ANCS on one link, as a pure state machine: inputs
/// in (``ANCSSessionInput``, each with the time), outputs out (``ANCSSessionOutput``). It
/// does no I/O and reads no clock; its driver writes the Control Point, feeds back the
/// Notification Source, Data Source and write results, and arms one timer at
/// ``nextDeadline``.
///
/// One Control Point command is in flight at a time (the Data Source carries no framing
/// that could tell two answers apart); the rest wait, in this order: the user's actions,
/// app names, then notification fetches oldest first. A command ends when its write was
/// answered and, for a Get Attributes command, its answer is complete, or at its deadline;
/// the next one is written only after the previous write was answered, so write results
/// are never paired with the wrong command.
///
/// Bounds: notifications waiting (for their fetch or their app's name) are at most
/// ``ANCSSessionConfiguration/maximumPendingNotifications``; past it the oldest waiting
/// fetch is told as skipped and counted. Actions waiting are bounded and refused past it.
/// App names are cached in a bounded ``AppNameCache``.
public struct ANCSSession: Sendable {
    public let configuration: ANCSSessionConfiguration
    public private(set) var appNames: AppNameCache
    public private(set) var counters = ANCSCounters()
    /// When the driver must feed ``ANCSSessionInput/tick`` (monotonic ns), if anything waits.
    public var nextDeadline: UInt64? { inFlight?.deadline }

    enum Work: Sendable, Hashable {
        case fetch(NotificationEvent)
        case appName(String)
        case action(uid: UInt32, action: NotificationAction)
    }

    struct InFlight: Sendable {
        let serial: UInt64
        let work: Work
        let deadline: UInt64
        var written = false
        var response: DataSourceResponse?
        /// The notification was removed while its fetch was in flight (already told).
        var cancelled = false
    }

    /// A notification whose attributes arrived, waiting for its app's name.
    struct Parked: Sendable {
        let event: NotificationEvent
        let attributes: NotificationAttributes
        let appIdentifier: String
    }

    var fetches: [NotificationEvent] = []
    var appQueue: [String] = []
    var actions: [(uid: UInt32, action: NotificationAction)] = []
    var parked: [Parked] = []
    var inFlight: InFlight?
    /// The serial of the command whose write has not been answered yet.
    var unansweredWrite: UInt64?
    var serial: UInt64 = 0
    var assembler = DataSourceAssembler()
    var toldSharingNotAllowed = false
    var ended = false

    public init(configuration: ANCSSessionConfiguration = ANCSSessionConfiguration(), appNames: AppNameCache = AppNameCache()) {
        self.configuration = configuration
        self.appNames = appNames
    }

    /// Notifications waiting for a fetch or an app name.
    public var pendingNotifications: Int { fetches.count + parked.count + (isFetchInFlight ? 1 : 0) }

    private var isFetchInFlight: Bool {
        if case .fetch = inFlight?.work, inFlight?.cancelled == false { return true }
        return false
    }

    public mutating func handle(_ input: ANCSSessionInput, now: UInt64) -> [ANCSSessionOutput] {
        guard !ended else { return [] }
        var outputs: [ANCSSessionOutput] = []
        switch input {
        case let .notificationSource(bytes):
            do throws(NotificationSourceError) {
                received(try NotificationEvent(bytes: bytes), into: &outputs)
            } catch {
                counters.malformedNotificationSource += 1
                outputs.append(.problem(.notificationSource(error)))
            }
        case let .dataSource(bytes):
            receivedData(bytes, into: &outputs)
        case let .controlPointWriteResult(code):
            writeAnswered(code.map { .rejected(ControlPointError(attErrorCode: $0)) }, into: &outputs)
        case let .controlPointWriteFailed(reason):
            writeAnswered(.writeFailed(reason: reason), into: &outputs)
        case let .performAction(uid, action):
            if actions.count >= configuration.maximumPendingActions {
                outputs.append(.actionFinished(uid: uid, action: action, failure: .queueFull))
            } else {
                actions.append((uid, action))
            }
        case .tick:
            if let inFlight, now >= inFlight.deadline {
                // A whole answer means the phone performed the command: only its Write
                // Response is late, and the Control Point stays closed until it comes.
                if let response = inFlight.response {
                    finish(with: .success(response), into: &outputs)
                } else {
                    finish(with: .failure(.timedOut(missingAttributes: assembler.missingAttributes)), into: &outputs)
                }
            }
        case .disconnected:
            disconnect(into: &outputs)
            return outputs
        }
        sendNext(now: now, into: &outputs)
        return outputs
    }

    // MARK: Notification Source

    private mutating func received(_ event: NotificationEvent, into outputs: inout [ANCSSessionOutput]) {
        switch event.kind {
        case .removed:
            removed(event, into: &outputs)
        case .added, .modified:
            if let index = fetches.firstIndex(where: { $0.uid == event.uid }) {
                // Not asked yet: one fetch tells the latest state; an add stays an add.
                var merged = event
                if fetches[index].kind == .added { merged.kind = .added }
                fetches[index] = merged
                return
            }
            if pendingNotifications >= configuration.maximumPendingNotifications { makeRoom(into: &outputs) }
            fetches.append(event)
        }
    }

    /// The bound's rule: the oldest fetch not yet asked is skipped; when every waiting
    /// notification already has its attributes, the oldest is told with its bundle
    /// identifier as its app's name.
    private mutating func makeRoom(into outputs: inout [ANCSSessionOutput]) {
        if !fetches.isEmpty {
            counters.skippedFetches += 1
            outputs.append(.notification(ANCSNotification(event: fetches.removeFirst(), fetchFailure: .skipped)))
        } else if !parked.isEmpty {
            let oldest = parked.removeFirst()
            outputs.append(.notification(ANCSNotification(event: oldest.event, attributes: oldest.attributes, appName: oldest.appIdentifier)))
        }
    }

    private mutating func removed(_ event: NotificationEvent, into outputs: inout [ANCSSessionOutput]) {
        if let index = fetches.firstIndex(where: { $0.uid == event.uid }) {
            outputs.append(.notification(ANCSNotification(event: fetches.remove(at: index), fetchFailure: .removedBeforeFetch)))
        }
        if case let .fetch(fetching) = inFlight?.work, fetching.uid == event.uid, inFlight?.cancelled == false {
            inFlight?.cancelled = true
            outputs.append(.notification(ANCSNotification(event: fetching, fetchFailure: .removedBeforeFetch)))
        }
        while let index = parked.firstIndex(where: { $0.event.uid == event.uid }) {
            let waiting = parked.remove(at: index)
            outputs.append(.notification(ANCSNotification(event: waiting.event, attributes: waiting.attributes, appName: waiting.appIdentifier)))
        }
        outputs.append(.notification(ANCSNotification(event: event)))
    }

    // MARK: Data Source and write results

    private mutating func receivedData(_ bytes: [UInt8], into outputs: inout [ANCSSessionOutput]) {
        do throws(DataSourceError) {
            guard let response = try assembler.receive(bytes) else { return }
            inFlight?.response = response
            if inFlight?.written == true { finish(with: .success(response), into: &outputs) }
        } catch {
            outputs.append(.problem(.dataSource(error)))
            if error.endsResponse {
                finish(with: .failure(.malformed(error)), into: &outputs)
            } else {
                counters.strayDataSource += 1
            }
        }
    }

    /// The last write's end: nil written, else why not.
    private mutating func writeAnswered(_ failure: ANCSCommandFailure?, into outputs: inout [ANCSSessionOutput]) {
        guard let answered = unansweredWrite else {
            counters.strayWriteResults += 1
            return
        }
        unansweredWrite = nil
        // The answer to a command already given up on (its deadline passed) frees the
        // Control Point and nothing else.
        guard inFlight?.serial == answered else { return }
        if let failure {
            if failure == .rejected(.notificationSharingNotAllowed), !toldSharingNotAllowed {
                toldSharingNotAllowed = true
                outputs.append(.problem(.notificationSharingNotAllowed))
            }
            finish(with: .failure(failure), into: &outputs)
            return
        }
        inFlight?.written = true
        if case .action = inFlight?.work {
            finish(with: nil, into: &outputs)
        } else if let response = inFlight?.response {
            finish(with: .success(response), into: &outputs)
        }
    }

    // MARK: Ending a command

    /// Ends the command in flight: `result` is its answer or failure, nil for an action done.
    private mutating func finish(with result: Result<DataSourceResponse, ANCSCommandFailure>?, into outputs: inout [ANCSSessionOutput]) {
        guard let ending = inFlight else { return }
        inFlight = nil
        assembler.cancel()
        if case let .failure(failure) = result {
            if case .removedBeforeFetch = failure {} else { counters.failedCommands += 1 }
        }
        switch ending.work {
        case let .action(uid, action):
            if case let .failure(failure) = result {
                outputs.append(.actionFinished(uid: uid, action: action, failure: failure))
            } else {
                outputs.append(.actionFinished(uid: uid, action: action, failure: nil))
            }
        case let .fetch(event):
            guard !ending.cancelled else { return }
            switch result {
            case let .success(response):
                fetched(event, NotificationAttributes(values: response.values), into: &outputs)
            case let .failure(failure):
                outputs.append(.notification(ANCSNotification(event: event, fetchFailure: failure)))
            case nil:
                break
            }
        case let .appName(app):
            switch result {
            case let .success(response):
                let name = response.values[AppAttributeID.displayName.rawValue].map { String(decoding: $0, as: UTF8.self) } ?? ""
                appNames.insert(.init(name: name.isEmpty ? app : name, isFallback: name.isEmpty), for: app)
            case let .failure(failure):
                appNames.insert(.init(name: app, isFallback: true), for: app)
                outputs.append(.problem(.appNameUnavailable(appIdentifier: app, failure: failure)))
            case nil:
                break
            }
            releaseParked(app: app, into: &outputs)
        }
    }

    /// A notification's attributes arrived: told now when its app's name is known (or
    /// cannot be asked), else parked until the name is fetched.
    private mutating func fetched(_ event: NotificationEvent, _ attributes: NotificationAttributes, into outputs: inout [ANCSSessionOutput]) {
        guard let app = attributes.appIdentifier, !app.isEmpty, !app.utf8.contains(0),
              ControlPointCommand.getAppAttributes(appIdentifier: app, attributes: [.displayName]).isWritable
        else {
            outputs.append(.notification(ANCSNotification(event: event, attributes: attributes, appName: attributes.appIdentifier)))
            return
        }
        if let known = appNames[app] {
            outputs.append(.notification(ANCSNotification(event: event, attributes: attributes, appName: known.name)))
            return
        }
        parked.append(Parked(event: event, attributes: attributes, appIdentifier: app))
        let asking: Bool = if case .appName(app) = inFlight?.work { true } else { false }
        if !asking, !appQueue.contains(app) { appQueue.append(app) }
    }

    private mutating func releaseParked(app: String, into outputs: inout [ANCSSessionOutput]) {
        let name = appNames[app]?.name ?? app
        for waiting in parked where waiting.appIdentifier == app {
            outputs.append(.notification(ANCSNotification(event: waiting.event, attributes: waiting.attributes, appName: name)))
        }
        parked.removeAll { $0.appIdentifier == app }
    }

    // MARK: Sending

    private mutating func sendNext(now: UInt64, into outputs: inout [ANCSSessionOutput]) {
        guard inFlight == nil, unansweredWrite == nil else { return }
        let work: Work
        let command: ControlPointCommand
        if !actions.isEmpty {
            let next = actions.removeFirst()
            work = .action(uid: next.uid, action: next.action)
            command = .performNotificationAction(uid: next.uid, action: next.action)
        } else if let app = nextAppToAsk() {
            work = .appName(app)
            command = .getAppAttributes(appIdentifier: app, attributes: [.displayName])
        } else if !fetches.isEmpty {
            let event = fetches.removeFirst()
            work = .fetch(event)
            command = .getNotificationAttributes(uid: event.uid, attributes: configuration.attributes)
        } else {
            return
        }
        serial += 1
        inFlight = InFlight(serial: serial, work: work, deadline: now &+ MonotonicClock.nanoseconds(in: configuration.commandTimeout))
        unansweredWrite = serial
        if let request = DataSourceRequest(command: command) { assembler.expect(request) }
        outputs.append(.writeControlPoint(command.bytes))
    }

    /// The next queued app whose notifications still wait (a removal may have told them all).
    private mutating func nextAppToAsk() -> String? {
        while !appQueue.isEmpty {
            let app = appQueue.removeFirst()
            if parked.contains(where: { $0.appIdentifier == app }) { return app }
        }
        return nil
    }

    private mutating func disconnect(into outputs: inout [ANCSSessionOutput]) {
        if inFlight != nil { finish(with: .failure(.disconnected), into: &outputs) }
        for event in fetches { outputs.append(.notification(ANCSNotification(event: event, fetchFailure: .disconnected))) }
        for waiting in parked {
            outputs.append(.notification(ANCSNotification(event: waiting.event, attributes: waiting.attributes, appName: waiting.appIdentifier)))
        }
        for action in actions { outputs.append(.actionFinished(uid: action.uid, action: action.action, failure: .disconnected)) }
        fetches = []
        parked = []
        actions = []
        appQueue = []
        ended = true
    }
}
