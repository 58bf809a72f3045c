/// What the answer to one Get Notification Attributes or Get App Attributes command must
/// hold: its header (command, UID or app identifier) and, per attribute, the most octets
/// its value may have. ``maximumResponseLength`` bounds what ``DataSourceAssembler`` keeps.
public struct DataSourceRequest: Sendable, Hashable {
    public enum Subject: Sendable, Hashable {
        case notification(uid: UInt32)
        /// The identifier's UTF-8 octets, as the command wrote them and the answer echoes them.
        case app(identifier: [UInt8])
    }

    public let subject: Subject
    /// Attribute ID to its largest allowed value length, one entry per distinct ID asked.
    public let maximumLengths: [UInt8: Int]

    /// The cap on an attribute the command gives no maximum length for (AppIdentifier, Date,
    /// MessageSize, the action labels, an app's DisplayName): far above what iOS sends
    /// (bundle identifiers stop at 155 characters, dates are 15), small enough that a phone
    /// cannot make us hold much.
    public static let implicitMaximumLength = 512

    /// The request a command's answer must match, or nil for Perform Notification Action,
    /// which the iPhone answers with the write's response only.
    public init?(command: ControlPointCommand) {
        switch command {
        case let .getNotificationAttributes(uid, attributes):
            subject = .notification(uid: uid)
            var lengths: [UInt8: Int] = [:]
            for attribute in attributes {
                lengths[attribute.id.rawValue] = attribute.id.takesMaximumLength
                    ? Int(attribute.maximumLength ?? UInt16.max) : Self.implicitMaximumLength
            }
            maximumLengths = lengths
        case let .getAppAttributes(appIdentifier, attributes):
            subject = .app(identifier: Array(appIdentifier.utf8))
            var lengths: [UInt8: Int] = [:]
            for attribute in attributes { lengths[attribute.rawValue] = Self.implicitMaximumLength }
            maximumLengths = lengths
        case .performNotificationAction:
            return nil
        }
    }

    public var commandID: ControlPointCommand.ID {
        switch subject {
        case .notification: .getNotificationAttributes
        case .app: .getAppAttributes
        }
    }

    /// The header's length: CommandID and UID, or CommandID and the NUL-terminated identifier.
    public var headerLength: Int {
        switch subject {
        case .notification: 5
        case let .app(identifier): 2 + identifier.count
        }
    }

    /// The most octets a correct answer has: the header, then per attribute its ID, its
    /// 2-octet length and the longest value allowed. Anything longer is refused.
    public var maximumResponseLength: Int {
        maximumLengths.values.reduce(headerLength) { $0 + 3 + $1 }
    }
}

/// A complete answer on the Data Source: every requested attribute's value, by attribute ID.
public struct DataSourceResponse: Sendable, Hashable {
    public let subject: DataSourceRequest.Subject
    public let values: [UInt8: [UInt8]]
}
