import BluetoothCore

/// NotificationAttributeID. Title, Subtitle and Message are requested with a maximum
/// length; the others have none on the wire.
public struct NotificationAttributeID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let appIdentifier = Self(rawValue: 0)
    public static let title = Self(rawValue: 1)
    public static let subtitle = Self(rawValue: 2)
    public static let message = Self(rawValue: 3)
    public static let messageSize = Self(rawValue: 4)
    public static let date = Self(rawValue: 5)
    public static let positiveActionLabel = Self(rawValue: 6)
    public static let negativeActionLabel = Self(rawValue: 7)

    /// Whether the request carries a 2-octet maximum length after this ID.
    public var takesMaximumLength: Bool { self == .title || self == .subtitle || self == .message }

    public var description: String {
        let names = ["AppIdentifier", "Title", "Subtitle", "Message", "MessageSize", "Date", "PositiveActionLabel", "NegativeActionLabel"]
        return Int(rawValue) < names.count ? names[Int(rawValue)] : "NotificationAttribute\(rawValue)"
    }
}

/// AppAttributeID.
public struct AppAttributeID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let displayName = Self(rawValue: 0)

    public var description: String { self == .displayName ? "DisplayName" : "AppAttribute\(rawValue)" }
}

/// ActionID of Perform Notification Action.
public enum NotificationAction: UInt8, Sendable, Hashable {
    case positive = 0
    case negative = 1
}

/// One requested notification attribute and, for Title, Subtitle and Message, the most
/// octets the iPhone may send (it truncates to this).
public struct NotificationAttributeRequest: Sendable, Hashable {
    public var id: NotificationAttributeID
    public var maximumLength: UInt16?

    public init(_ id: NotificationAttributeID, maximumLength: UInt16? = nil) {
        self.id = id
        self.maximumLength = maximumLength
    }
}

/// A Control Point command (ANCS specification, "Control Point"), written with response.
public enum ControlPointCommand: Sendable, Hashable {
    case getNotificationAttributes(uid: UInt32, attributes: [NotificationAttributeRequest])
    /// The app identifier goes NUL-terminated; the iPhone echoes it in the answer.
    case getAppAttributes(appIdentifier: String, attributes: [AppAttributeID])
    case performNotificationAction(uid: UInt32, action: NotificationAction)

    /// The longest value a Control Point write can carry: an attribute value's maximum
    /// (Core 5.4 Vol 3 Part F 3.2.9), reached with prepared writes.
    public static let maximumLength = 512

    /// Whether the command can be written at all, with prepared writes if need be: a Get
    /// App Attributes with a bundle identifier of about 500 octets (only a hostile phone
    /// sends one) cannot.
    public var isWritable: Bool { bytes.count <= Self.maximumLength }

    public enum ID: UInt8, Sendable, Hashable {
        case getNotificationAttributes = 0
        case getAppAttributes = 1
        case performNotificationAction = 2
    }

    public var id: ID {
        switch self {
        case .getNotificationAttributes: .getNotificationAttributes
        case .getAppAttributes: .getAppAttributes
        case .performNotificationAction: .performNotificationAction
        }
    }

    /// The value to write. A maximum length is written for the attributes that take one
    /// (65535 when the request named none) and never for the others, whatever the request says.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writer.write(id.rawValue)
        switch self {
        case let .getNotificationAttributes(uid, attributes):
            writer.write(uid)
            for attribute in attributes {
                writer.write(attribute.id.rawValue)
                if attribute.id.takesMaximumLength { writer.write(attribute.maximumLength ?? UInt16.max) }
            }
        case let .getAppAttributes(appIdentifier, attributes):
            writer.write(contentsOf: appIdentifier.utf8)
            writer.write(UInt8(0))
            for attribute in attributes { writer.write(attribute.rawValue) }
        case let .performNotificationAction(uid, action):
            writer.write(uid)
            writer.write(action.rawValue)
        }
        return writer.bytes
    }
}
