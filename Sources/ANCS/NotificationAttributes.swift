import BluetoothCore

/// A notification's attributes as the iPhone sent them. Text is UTF-8 with any broken
/// sequence (the iPhone truncates to a length in octets, which may cut a character)
/// replaced by U+FFFD. A field is nil when it was not requested; empty when the iPhone
/// has none.
public struct NotificationAttributes: Sendable, Hashable {
    public var appIdentifier: String?
    public var title: String?
    public var subtitle: String?
    public var message: String?
    /// The whole message's length in characters, however much of it was requested.
    public var messageSize: Int?
    public var date: ANCSDate?
    public var positiveActionLabel: String?
    public var negativeActionLabel: String?
    /// Values that were present and did not parse (a Date or MessageSize), so they are
    /// reported rather than lost.
    public var problems: [String] = []

    public init() {}

    /// Reads the values of a complete answer.
    public init(values: [UInt8: [UInt8]]) {
        func text(_ id: NotificationAttributeID) -> String? {
            values[id.rawValue].map { String(decoding: $0, as: UTF8.self) }
        }
        appIdentifier = text(.appIdentifier)
        title = text(.title)
        subtitle = text(.subtitle)
        message = text(.message)
        positiveActionLabel = text(.positiveActionLabel)
        negativeActionLabel = text(.negativeActionLabel)
        if let size = values[NotificationAttributeID.messageSize.rawValue], !size.isEmpty {
            if let parsed = Self.decimal(size) { messageSize = parsed } else { problems.append("MessageSize \"\(String(decoding: size, as: UTF8.self))\" is not a number") }
        }
        if let dateText = values[NotificationAttributeID.date.rawValue], !dateText.isEmpty {
            do { date = try ANCSDate(text: dateText) } catch { problems.append("Date: \(error)") }
        }
    }

    /// A non-negative decimal of at most nine digits (no sign, no spaces).
    static func decimal(_ octets: [UInt8]) -> Int? {
        guard !octets.isEmpty, octets.count <= 9 else { return nil }
        var value = 0
        for octet in octets {
            guard octet >= UInt8(ascii: "0"), octet <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(octet - UInt8(ascii: "0"))
        }
        return value
    }
}
