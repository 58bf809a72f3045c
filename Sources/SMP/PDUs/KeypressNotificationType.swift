/// Notification Type of Pairing Keypress Notification (Core Vol 3 Part H 3.5.8, Table 3.8).
public struct KeypressNotificationType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let passkeyEntryStarted = KeypressNotificationType(rawValue: 0)
    public static let passkeyDigitEntered = KeypressNotificationType(rawValue: 1)
    public static let passkeyDigitErased = KeypressNotificationType(rawValue: 2)
    public static let passkeyCleared = KeypressNotificationType(rawValue: 3)
    public static let passkeyEntryCompleted = KeypressNotificationType(rawValue: 4)
}
