/// EntityID (AMS specification, "Entity Update").
public enum AMSEntity: UInt8, Sendable, Hashable, CaseIterable {
    case player = 0
    case queue = 1
    case track = 2
}

/// Player attributes: Name, PlaybackInfo ("state,rate,elapsed"), Volume ("0.0"-"1.0").
public enum AMSPlayerAttribute: UInt8, Sendable, Hashable {
    case name = 0
    case playbackInfo = 1
    case volume = 2
}

/// Queue attributes: Index, Count, ShuffleMode, RepeatMode (decimal strings).
public enum AMSQueueAttribute: UInt8, Sendable, Hashable {
    case index = 0
    case count = 1
    case shuffleMode = 2
    case repeatMode = 3
}

/// Track attributes: Artist, Album, Title, Duration (seconds as a decimal string).
public enum AMSTrackAttribute: UInt8, Sendable, Hashable {
    case artist = 0
    case album = 1
    case title = 2
    case duration = 3
}

/// A write to Entity Update: follow these attributes of one entity. One write per entity.
public struct AMSEntityUpdateCommand: Sendable, Hashable {
    public var entity: AMSEntity
    public var attributes: [UInt8]

    public init(entity: AMSEntity, attributes: [UInt8]) {
        self.entity = entity
        self.attributes = attributes
    }

    /// The attributes now-playing needs, one command per entity.
    public static let nowPlaying: [AMSEntityUpdateCommand] = [
        AMSEntityUpdateCommand(entity: .player, attributes: [AMSPlayerAttribute.name.rawValue, AMSPlayerAttribute.playbackInfo.rawValue, AMSPlayerAttribute.volume.rawValue]),
        AMSEntityUpdateCommand(entity: .track, attributes: [AMSTrackAttribute.artist.rawValue, AMSTrackAttribute.album.rawValue, AMSTrackAttribute.title.rawValue, AMSTrackAttribute.duration.rawValue]),
    ]

    public var bytes: [UInt8] { [entity.rawValue] + attributes }
}

/// One Entity Update notification: EntityID, AttributeID, EntityUpdateFlags, then the value
/// as UTF-8 (cut at the MTU when flagged truncated; Entity Attribute reads the whole).
public struct AMSEntityUpdate: Sendable, Hashable {
    public var entity: AMSEntity
    public var attribute: UInt8
    public var truncated: Bool
    public var value: String

    public init(entity: AMSEntity, attribute: UInt8, truncated: Bool = false, value: String) {
        self.entity = entity
        self.attribute = attribute
        self.truncated = truncated
        self.value = value
    }

    /// Decodes one notification. Flag bits other than Truncated are ignored (reserved); a
    /// broken UTF-8 sequence (a truncated value may end mid-character) becomes U+FFFD.
    public init(bytes: [UInt8]) throws(AMSDecodeError) {
        guard bytes.count >= 3 else { throw .truncated(length: bytes.count) }
        guard let entity = AMSEntity(rawValue: bytes[0]) else { throw .unknownEntity(bytes[0]) }
        self.entity = entity
        attribute = bytes[1]
        truncated = bytes[2] & 0x01 != 0
        value = String(decoding: bytes[3...], as: UTF8.self)
    }

    public var bytes: [UInt8] {
        [entity.rawValue, attribute, truncated ? 1 : 0] + Array(value.utf8)
    }
}

public enum AMSDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    case truncated(length: Int)
    case unknownEntity(UInt8)

    public var description: String {
        switch self {
        case let .truncated(length): "Entity Update value of \(length) octet(s), at least 3 expected"
        case let .unknownEntity(entity): "Entity Update for unknown entity \(entity)"
        }
    }
}
