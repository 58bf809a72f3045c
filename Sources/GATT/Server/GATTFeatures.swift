/// The Client Supported Features characteristic's first octet (Core 5.4 Vol 3 Part G
/// 7.2): what a client tells the server it can do. A client may set bits, never clear one
/// it set (the server answers Value Not Allowed, 0x13).
public struct GATTClientSupportedFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Robust Caching (2.5.2.1): the server may answer Database Out Of Sync.
    public static let robustCaching = GATTClientSupportedFeatures(rawValue: 0x01)
    public static let enhancedATTBearer = GATTClientSupportedFeatures(rawValue: 0x02)
    public static let multipleHandleValueNotifications = GATTClientSupportedFeatures(rawValue: 0x04)

    /// The bits 7.2 defines; the rest are reserved, and a server keeps none of them.
    public static let defined: GATTClientSupportedFeatures = [.robustCaching, .enhancedATTBearer, .multipleHandleValueNotifications]
}

/// The Server Supported Features characteristic's first octet (Core 5.4 Vol 3 Part G 7.4).
public struct GATTServerSupportedFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let enhancedATTBearer = GATTServerSupportedFeatures(rawValue: 0x01)
}
