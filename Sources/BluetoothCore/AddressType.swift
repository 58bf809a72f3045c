/// The type of an LE address as HCI carries it (Core Vol 4 Part E 7.7.65.1 Peer_Address_Type).
public enum AddressType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case `public` = 0x00
    case random = 0x01
    /// A public identity address the controller resolved from a resolvable private address.
    case publicIdentity = 0x02
    /// A random static identity address the controller resolved from an RPA.
    case randomIdentity = 0x03

    public var isRandom: Bool { self == .random || self == .randomIdentity }

    public var description: String {
        switch self {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        }
    }
}

/// What an address is, from its type and, for random addresses, its two top bits
/// (Core Vol 6 Part B 1.3).
public enum AddressKind: Sendable, Hashable, CustomStringConvertible {
    case `public`
    case randomStatic
    case resolvablePrivate
    case nonResolvablePrivate
    /// Top bits 0b10: reserved by the specification; seen only from broken peers.
    case randomReserved

    public var description: String {
        switch self {
        case .public: "public"
        case .randomStatic: "random static"
        case .resolvablePrivate: "resolvable private"
        case .nonResolvablePrivate: "non-resolvable private"
        case .randomReserved: "random (reserved bits)"
        }
    }
}

/// An address together with its type: what identifies an LE device on the air.
public struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var type: AddressType

    public init(_ address: BluetoothAddress, type: AddressType) {
        self.address = address
        self.type = type
    }

    /// Parses "AA:BB:CC:DD:EE:FF", optionally followed by "/public" or "/random"
    /// (also "/p", "/r"); without a suffix the type is `defaultType`.
    public init?(_ text: String, defaultType: AddressType = .public) {
        let pieces = text.split(separator: "/", maxSplits: 1)
        guard let first = pieces.first, let address = BluetoothAddress(String(first)) else { return nil }
        var type = defaultType
        if pieces.count == 2 {
            switch pieces[1].lowercased() {
            case "public", "p": type = .public
            case "random", "r": type = .random
            default: return nil
            }
        }
        self.init(address, type: type)
    }

    public var kind: AddressKind {
        guard type.isRandom else { return .public }
        if type == .randomIdentity { return .randomStatic }
        switch address.mostSignificantByte >> 6 {
        case 0b11: return .randomStatic
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .randomReserved
        }
    }

    /// Whether this is an identity address (public or random static): one a device keeps,
    /// under which it can be known again.
    public var isIdentity: Bool { kind == .public || kind == .randomStatic }

    public var description: String { "\(address)/\(type.isRandom ? "random" : "public")" }
}
