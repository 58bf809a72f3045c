/// PlaybackInfo: "PlaybackState,PlaybackRate,ElapsedTime" (AMS specification, "Player").
public struct AMSPlaybackInfo: Sendable, Hashable {
    public enum State: Int, Sendable, Hashable {
        case paused = 0
        case playing = 1
        case rewinding = 2
        case fastForwarding = 3

        public var name: String {
            switch self {
            case .paused: "paused"
            case .playing: "playing"
            case .rewinding: "rewinding"
            case .fastForwarding: "fastForwarding"
            }
        }
    }

    public var state: State
    public var rate: Double
    /// Seconds into the track when the value was sent.
    public var elapsed: Double

    public init(state: State, rate: Double, elapsed: Double) {
        self.state = state
        self.rate = rate
        self.elapsed = elapsed
    }

    /// Nil unless three comma-separated fields: a known state, a finite rate, a finite elapsed time.
    public init?(text: String) {
        let fields = text.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 3, let number = Int(fields[0]), let state = State(rawValue: number),
              let rate = Double(fields[1]), rate.isFinite, let elapsed = Double(fields[2]), elapsed.isFinite
        else { return nil }
        self.init(state: state, rate: rate, elapsed: elapsed)
    }
}

/// What the iPhone is playing, folded from Entity Update notifications.
public struct AMSNowPlaying: Sendable, Hashable {
    public var playerName: String?
    public var playbackInfo: AMSPlaybackInfo?
    /// 0.0 to 1.0.
    public var volume: Double?
    public var title: String?
    public var artist: String?
    public var album: String?
    /// Seconds.
    public var duration: Double?
    /// Attributes that came truncated (read them whole through Entity Attribute if needed).
    public var truncated: Set<String> = []

    public init() {}

    /// Takes one update; false when it names nothing now-playing keeps (a queue attribute,
    /// an unknown ID) or a number did not parse.
    @discardableResult
    public mutating func apply(_ update: AMSEntityUpdate) -> Bool {
        let field: String?
        switch (update.entity, update.attribute) {
        case (.player, AMSPlayerAttribute.name.rawValue):
            playerName = update.value
            field = "playerName"
        case (.player, AMSPlayerAttribute.playbackInfo.rawValue):
            playbackInfo = AMSPlaybackInfo(text: update.value)
            field = playbackInfo == nil && !update.value.isEmpty ? nil : "playbackInfo"
        case (.player, AMSPlayerAttribute.volume.rawValue):
            volume = Double(update.value).flatMap { $0.isFinite ? $0 : nil }
            field = volume == nil && !update.value.isEmpty ? nil : "volume"
        case (.track, AMSTrackAttribute.title.rawValue):
            title = update.value
            field = "title"
        case (.track, AMSTrackAttribute.artist.rawValue):
            artist = update.value
            field = "artist"
        case (.track, AMSTrackAttribute.album.rawValue):
            album = update.value
            field = "album"
        case (.track, AMSTrackAttribute.duration.rawValue):
            duration = Double(update.value).flatMap { $0.isFinite ? $0 : nil }
            field = duration == nil && !update.value.isEmpty ? nil : "duration"
        default:
            field = nil
        }
        guard let field else { return false }
        if update.truncated { truncated.insert(field) } else { truncated.remove(field) }
        return true
    }
}
