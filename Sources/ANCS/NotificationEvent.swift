import BluetoothCore

/// One Notification Source value (ANCS specification, "Notification Source"): a
/// notification was added, modified or removed on the iPhone.
public struct NotificationEvent: Sendable, Hashable {
    public enum Kind: UInt8, Sendable, Hashable, CaseIterable {
        case added = 0
        case modified = 1
        case removed = 2

        public var name: String {
            switch self {
            case .added: "added"
            case .modified: "modified"
            case .removed: "removed"
            }
        }
    }

    public var kind: Kind
    public var flags: NotificationFlags
    public var category: NotificationCategory
    /// How many notifications of this category the iPhone holds now.
    public var categoryCount: UInt8
    /// The iPhone's handle for this notification, valid until it is removed.
    public var uid: UInt32

    public init(kind: Kind, flags: NotificationFlags = [], category: NotificationCategory, categoryCount: UInt8 = 1, uid: UInt32) {
        self.kind = kind
        self.flags = flags
        self.category = category
        self.categoryCount = categoryCount
        self.uid = uid
    }

    public static let length = 8

    /// Decodes one value. Octets after the eighth are ignored: Apple has appended fields to
    /// its services before, and a consumer that refused longer values would go deaf after an
    /// iOS update. An unknown EventID is refused (nothing sensible can be done with it); an
    /// unknown category is kept by number, since the notification itself is still real.
    public init(bytes: [UInt8]) throws(NotificationSourceError) {
        guard bytes.count >= Self.length else { throw .truncated(length: bytes.count) }
        guard let kind = Kind(rawValue: bytes[0]) else { throw .unknownEventID(bytes[0]) }
        self.kind = kind
        flags = NotificationFlags(rawValue: bytes[1])
        category = NotificationCategory(rawValue: bytes[2])
        categoryCount = bytes[3]
        uid = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
    }

    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: Self.length)
        writer.write(kind.rawValue)
        writer.write(flags.rawValue)
        writer.write(category.rawValue)
        writer.write(categoryCount)
        writer.write(uid)
        return writer.bytes
    }
}

/// Why a Notification Source value was not an event.
public enum NotificationSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    case truncated(length: Int)
    case unknownEventID(UInt8)

    public var description: String {
        switch self {
        case let .truncated(length): "Notification Source value of \(length) octet(s), 8 expected"
        case let .unknownEventID(value): "Notification Source EventID \(value) is not added (0), modified (1) or removed (2)"
        }
    }
}

/// EventFlags. Unknown bits are kept in `rawValue`.
public struct NotificationFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let silent = NotificationFlags(rawValue: 1 << 0)
    public static let important = NotificationFlags(rawValue: 1 << 1)
    /// Present before we subscribed: iOS replays every existing notification at subscription.
    public static let preExisting = NotificationFlags(rawValue: 1 << 2)
    public static let positiveAction = NotificationFlags(rawValue: 1 << 3)
    public static let negativeAction = NotificationFlags(rawValue: 1 << 4)

    static let named: [(NotificationFlags, String)] = [
        (.silent, "silent"), (.important, "important"), (.preExisting, "preExisting"),
        (.positiveAction, "positiveAction"), (.negativeAction, "negativeAction"),
    ]

    /// The set flags by name, in bit order.
    public var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }
}

/// CategoryID. Numbers past Entertainment (11) are kept: a later iOS may add categories.
public struct NotificationCategory: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let other = Self(rawValue: 0)
    public static let incomingCall = Self(rawValue: 1)
    public static let missedCall = Self(rawValue: 2)
    public static let voicemail = Self(rawValue: 3)
    public static let social = Self(rawValue: 4)
    public static let schedule = Self(rawValue: 5)
    public static let email = Self(rawValue: 6)
    public static let news = Self(rawValue: 7)
    public static let healthAndFitness = Self(rawValue: 8)
    public static let businessAndFinance = Self(rawValue: 9)
    public static let location = Self(rawValue: 10)
    public static let entertainment = Self(rawValue: 11)

    static let names = [
        "Other", "IncomingCall", "MissedCall", "Voicemail", "Social", "Schedule", "Email",
        "News", "HealthAndFitness", "BusinessAndFinance", "Location", "Entertainment",
    ]

    /// The specification's name ("MissedCall"), or "Category12" for a number it does not define.
    public var description: String {
        Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : "Category\(rawValue)"
    }
}
