/// RemoteCommandID (AMS specification, "Remote Command"): written to the Remote Command
/// characteristic, one octet. Its notifications list the commands the media app accepts now.
public enum AMSRemoteCommand: UInt8, Sendable, Hashable, CaseIterable {
    case play = 0
    case pause = 1
    case togglePlayPause = 2
    case nextTrack = 3
    case previousTrack = 4
    case volumeUp = 5
    case volumeDown = 6
    case advanceRepeatMode = 7
    case advanceShuffleMode = 8
    case skipForward = 9
    case skipBackward = 10
    case likeTrack = 11
    case dislikeTrack = 12
    case bookmarkTrack = 13

    /// The command a user names: "play", "pause", "toggle", "next", "previous", "volume-up",
    /// "volume-down", ..., or nil.
    public init?(name: String) {
        guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = found
    }

    public var name: String {
        switch self {
        case .play: "play"
        case .pause: "pause"
        case .togglePlayPause: "toggle"
        case .nextTrack: "next"
        case .previousTrack: "previous"
        case .volumeUp: "volume-up"
        case .volumeDown: "volume-down"
        case .advanceRepeatMode: "repeat"
        case .advanceShuffleMode: "shuffle"
        case .skipForward: "skip-forward"
        case .skipBackward: "skip-backward"
        case .likeTrack: "like"
        case .dislikeTrack: "dislike"
        case .bookmarkTrack: "bookmark"
        }
    }

    public var bytes: [UInt8] { [rawValue] }

    /// The commands a Remote Command notification lists. IDs this version does not know are
    /// left out: the user cannot name them anyway.
    public static func supported(from value: [UInt8]) -> [AMSRemoteCommand] {
        value.compactMap(AMSRemoteCommand.init(rawValue:))
    }
}

/// AMS's own ATT error codes on its characteristics.
public enum AMSError: UInt8, Error, Sendable, Hashable, CustomStringConvertible {
    /// 0xA0: the media app is in no state to take the command (nothing is playing).
    case invalidState = 0xA0
    case invalidCommand = 0xA1
    /// 0xA2: the attribute asked for on Entity Attribute is empty.
    case absentAttribute = 0xA2

    public var description: String {
        switch self {
        case .invalidState: "the iPhone's media app cannot take this now (AMS 0xA0 Invalid State)"
        case .invalidCommand: "the iPhone found the AMS command malformed (0xA1 Invalid Command)"
        case .absentAttribute: "the iPhone has no value for this attribute (AMS 0xA2 Absent Attribute)"
        }
    }
}
