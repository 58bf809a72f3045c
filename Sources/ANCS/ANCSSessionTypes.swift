/// How an ``ANCSSession`` asks and what it may hold.
public struct ANCSSessionConfiguration: Sendable, Hashable {
    /// The attributes fetched for every added or modified notification.
    public var attributes: [NotificationAttributeRequest]
    /// How long one command may take from its write to the last octet of its answer.
    public var commandTimeout: Duration
    /// Notifications waiting for their attributes or their app's name, at most. When an
    /// event would exceed it, the oldest waiting fetch is skipped (reported, counted).
    public var maximumPendingNotifications: Int
    /// Perform Notification Action commands waiting, at most; more are refused at once.
    public var maximumPendingActions: Int

    public init(
        titleLength: UInt16 = 256, subtitleLength: UInt16 = 256, messageLength: UInt16 = 2048,
        commandTimeout: Duration = .seconds(10), maximumPendingNotifications: Int = 1024, maximumPendingActions: Int = 32
    ) {
        attributes = [
            NotificationAttributeRequest(.appIdentifier),
            NotificationAttributeRequest(.title, maximumLength: titleLength),
            NotificationAttributeRequest(.subtitle, maximumLength: subtitleLength),
            NotificationAttributeRequest(.message, maximumLength: messageLength),
            NotificationAttributeRequest(.messageSize),
            NotificationAttributeRequest(.date),
            NotificationAttributeRequest(.positiveActionLabel),
            NotificationAttributeRequest(.negativeActionLabel),
        ]
        self.commandTimeout = commandTimeout
        self.maximumPendingNotifications = max(1, maximumPendingNotifications)
        self.maximumPendingActions = max(1, maximumPendingActions)
    }
}

/// What drives an ``ANCSSession``. Every input comes with the monotonic time in nanoseconds.
public enum ANCSSessionInput: Sendable, Hashable {
    /// A Notification Source value.
    case notificationSource([UInt8])
    /// A Data Source value.
    case dataSource([UInt8])
    /// The iPhone's answer to the last Control Point write: nil for success, else the ATT
    /// error code. The driver reports every write it was asked for, once, in order (a write
    /// lost with the link counts as answered by the disconnection).
    case controlPointWriteResult(attErrorCode: UInt8?)
    /// The last Control Point write failed without an ATT error from the iPhone (its
    /// transaction timed out, the link closed, a prepared write's echo differed and the
    /// queue was cancelled, the answer was malformed): why, in words. Reported instead of
    /// a result, once.
    case controlPointWriteFailed(reason: String)
    /// The user asks for a notification's positive or negative action.
    case performAction(uid: UInt32, action: NotificationAction)
    /// Only the time: the driver's timer for ``ANCSSession/nextDeadline`` fired.
    case tick
    /// The link is gone: everything waiting is reported and nothing more is sent.
    case disconnected
}

/// What an ``ANCSSession`` asks its driver to do or tells its user, in order.
public enum ANCSSessionOutput: Sendable, Hashable {
    /// Write this value to the Control Point with response, and answer with
    /// ``ANCSSessionInput/controlPointWriteResult(attErrorCode:)``.
    case writeControlPoint([UInt8])
    /// A notification added, modified or removed. Each added or modified event is told
    /// exactly once, with its attributes or with why it has none.
    case notification(ANCSNotification)
    /// A Perform Notification Action finished: nil on success.
    case actionFinished(uid: UInt32, action: NotificationAction, failure: ANCSCommandFailure?)
    /// Something the iPhone sent that was not used, or that the user must act on.
    case problem(ANCSProblem)
}

/// One notification as the consumer tells it.
public struct ANCSNotification: Sendable, Hashable {
    public var event: NotificationEvent
    /// Nil for a removal, or when the fetch failed (``fetchFailure`` says why).
    public var attributes: NotificationAttributes?
    /// The app's display name; its bundle identifier when the name could not be had.
    public var appName: String?
    public var fetchFailure: ANCSCommandFailure?

    public init(event: NotificationEvent, attributes: NotificationAttributes? = nil, appName: String? = nil, fetchFailure: ANCSCommandFailure? = nil) {
        self.event = event
        self.attributes = attributes
        self.appName = appName
        self.fetchFailure = fetchFailure
    }
}

/// Why a command did not produce its answer.
public enum ANCSCommandFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The Control Point write was refused.
    case rejected(ControlPointError)
    /// The deadline passed; the answer lacked these attribute IDs.
    case timedOut(missingAttributes: [UInt8])
    /// The answer broke the format and was dropped.
    case malformed(DataSourceError)
    /// Never asked: the queue was full (``ANCSSessionConfiguration/maximumPendingNotifications``).
    case skipped
    /// Never asked or dropped: the notification was removed first.
    case removedBeforeFetch
    /// The link went away first.
    case disconnected
    /// Refused at once: too many actions waiting.
    case queueFull
    /// The Control Point write failed without an ATT error from the iPhone.
    case writeFailed(reason: String)

    public var description: String {
        switch self {
        case let .rejected(error): "\(error)"
        case let .timedOut(missing): "no complete answer before the deadline (missing attributes \(missing))"
        case let .malformed(error): "malformed answer: \(error)"
        case .skipped: "not fetched: too many notifications waiting"
        case .removedBeforeFetch: "removed before its attributes were fetched"
        case .disconnected: "the link went away"
        case .queueFull: "too many actions waiting"
        case let .writeFailed(reason): "the Control Point write failed on our side of the link: \(reason)"
        }
    }
}

/// Input the session could not use, or a refusal the user must act on.
public enum ANCSProblem: Sendable, Hashable, CustomStringConvertible {
    case notificationSource(NotificationSourceError)
    case dataSource(DataSourceError)
    /// ATT 0x03 on the Control Point: told once per session.
    case notificationSharingNotAllowed
    /// The app's name could not be fetched; its bundle identifier stands in for it.
    case appNameUnavailable(appIdentifier: String, failure: ANCSCommandFailure)

    public var description: String {
        switch self {
        case let .notificationSource(error): "\(error)"
        case let .dataSource(error): "\(error)"
        case .notificationSharingNotAllowed: ControlPointError.notificationSharingNotAllowed.description
        case let .appNameUnavailable(app, failure): "no display name for \(app): \(failure)"
        }
    }
}

/// What an ``ANCSSession`` refused, dropped or gave up on, counted.
public struct ANCSCounters: Sendable, Hashable {
    /// Fetches skipped because the queue was full.
    public var skippedFetches = 0
    /// Commands that timed out, were rejected or got a malformed answer.
    public var failedCommands = 0
    public var malformedNotificationSource = 0
    /// Data Source octets dropped: nothing outstanding, or another command's answer.
    public var strayDataSource = 0
    /// Write results with no write waiting for one.
    public var strayWriteResults = 0

    public init() {}
}
