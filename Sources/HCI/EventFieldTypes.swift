import BluetoothCore

// Small value types that several events share. Each keeps the raw byte it was decoded from,
// so a value the specification reserves (or a newer specification assigns) still decodes and
// re-encodes unchanged instead of making the whole event unreadable.

/// An address type byte as LE events report it (Peer_Address_Type, Address_Type,
/// Scanner_Address_Type, Direct_Address_Type; Core Vol 4 Part E 7.7.65).
public struct ReportedAddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(_ type: AddressType) { rawValue = type.rawValue }

    public static let `public` = ReportedAddressType(rawValue: 0x00)
    public static let random = ReportedAddressType(rawValue: 0x01)
    /// A public identity address the controller resolved from a resolvable private address.
    public static let publicIdentity = ReportedAddressType(rawValue: 0x02)
    /// A random static identity address the controller resolved from a resolvable private address.
    public static let randomIdentity = ReportedAddressType(rawValue: 0x03)
    /// Direct_Address_Type only: a resolvable private address the controller could not resolve.
    public static let unresolvedResolvablePrivate = ReportedAddressType(rawValue: 0xFE)
    /// Extended reports only: an anonymous advertisement, which carries no address.
    public static let anonymous = ReportedAddressType(rawValue: 0xFF)

    /// The BluetoothCore type for 0x00...0x03, nil for the special and reserved values.
    public var addressType: AddressType? { AddressType(rawValue: rawValue) }

    public var description: String {
        if let addressType { return addressType.description }
        switch rawValue {
        case 0xFE: return "unresolved-rpa"
        case 0xFF: return "anonymous"
        default: return "address type 0x\(Hex.string([rawValue]))"
        }
    }
}

/// The local device's role on a new connection (Core Vol 4 Part E 7.7.65.1 Role).
public struct ConnectionRole: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let central = ConnectionRole(rawValue: 0x00)
    public static let peripheral = ConnectionRole(rawValue: 0x01)

    public var description: String {
        switch self {
        case .central: "central"
        case .peripheral: "peripheral"
        default: "role 0x\(Hex.string([rawValue]))"
        }
    }
}

/// An LE physical layer as events report it (TX_PHY, RX_PHY, Primary_PHY, Secondary_PHY).
///
/// Not the bit-mask form that LE Set PHY takes: events report one PHY as a number.
public struct LEPHY: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Secondary_PHY of an extended report: the advertisement used no secondary channel.
    public static let none = LEPHY(rawValue: 0x00)
    public static let le1M = LEPHY(rawValue: 0x01)
    public static let le2M = LEPHY(rawValue: 0x02)
    public static let leCoded = LEPHY(rawValue: 0x03)

    public var description: String {
        switch self {
        case .none: "none"
        case .le1M: "LE 1M"
        case .le2M: "LE 2M"
        case .leCoded: "LE Coded"
        default: "reserved PHY 0x\(Hex.string([rawValue]))"
        }
    }
}

/// Connection handles are 12 bits (Core Vol 4 Part E 5.4.2); events carry them in a 16-bit
/// field whose top 4 bits are reserved. Reserved bits are ignored on receipt, so decoding
/// masks them rather than rejecting the event, and encoding never sets them: the two
/// directions agree, and a decoded value always re-encodes to the same handle.
let connectionHandleMask: UInt16 = 0x0FFF

extension ByteReader {
    mutating func readMaskedConnectionHandle() throws(DecodeError) -> UInt16 {
        try readUInt16() & connectionHandleMask
    }
}

extension ByteWriter {
    mutating func writeMaskedConnectionHandle(_ handle: UInt16) {
        write(handle & connectionHandleMask)
    }
}
