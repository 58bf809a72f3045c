/// The Format field of a Characteristic Presentation Format descriptor (Assigned Numbers
/// 2.4.1, Formats): how the characteristic value's bytes are to be read.
public struct PresentationFormatCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let boolean = Self(rawValue: 0x01)
    public static let uint2 = Self(rawValue: 0x02)
    public static let nibble = Self(rawValue: 0x03)
    public static let uint8 = Self(rawValue: 0x04)
    public static let uint12 = Self(rawValue: 0x05)
    public static let uint16 = Self(rawValue: 0x06)
    public static let uint24 = Self(rawValue: 0x07)
    public static let uint32 = Self(rawValue: 0x08)
    public static let uint48 = Self(rawValue: 0x09)
    public static let uint64 = Self(rawValue: 0x0A)
    public static let uint128 = Self(rawValue: 0x0B)
    public static let sint8 = Self(rawValue: 0x0C)
    public static let sint12 = Self(rawValue: 0x0D)
    public static let sint16 = Self(rawValue: 0x0E)
    public static let sint24 = Self(rawValue: 0x0F)
    public static let sint32 = Self(rawValue: 0x10)
    public static let sint48 = Self(rawValue: 0x11)
    public static let sint64 = Self(rawValue: 0x12)
    public static let sint128 = Self(rawValue: 0x13)
    public static let float32 = Self(rawValue: 0x14)
    public static let float64 = Self(rawValue: 0x15)
    /// IEEE 11073-20601 SFLOAT.
    public static let medfloat16 = Self(rawValue: 0x16)
    /// IEEE 11073-20601 FLOAT.
    public static let medfloat32 = Self(rawValue: 0x17)
    /// IEEE 11073-20601 nomenclature code: two uint16.
    public static let uint16x2 = Self(rawValue: 0x18)
    public static let utf8s = Self(rawValue: 0x19)
    public static let utf16s = Self(rawValue: 0x1A)
    /// Opaque structure.
    public static let `struct` = Self(rawValue: 0x1B)
    public static let medASN1 = Self(rawValue: 0x1C)

    // The short names of the Assigned Numbers table, indexed by code; 0x00 is reserved.
    private static let names = [
        "", "boolean", "2bit", "nibble", "uint8", "uint12", "uint16", "uint24", "uint32",
        "uint48", "uint64", "uint128", "sint8", "sint12", "sint16", "sint24", "sint32",
        "sint48", "sint64", "sint128", "float32", "float64", "medfloat16", "medfloat32",
        "uint16[2]", "utf8s", "utf16s", "struct", "medASN1",
    ]

    /// "sint16"; nil for a reserved code.
    public var name: String? {
        let index = Int(rawValue)
        guard index > 0, index < Self.names.count else { return nil }
        return Self.names[index]
    }

    /// The name, or "reserved (0x1F)".
    public var description: String { name ?? "reserved (0x\(hex8(rawValue)))" }

    /// Integer formats: (bytes on the wire, significant bits, signed). The exponent of the
    /// descriptor applies to these only (Core Vol 3 Part G 3.3.3.5.2).
    var integerLayout: (width: Int, bits: Int, signed: Bool)? {
        switch self {
        case .uint2: (1, 2, false)
        case .nibble: (1, 4, false)
        case .uint8: (1, 8, false)
        case .uint12: (2, 12, false)
        case .uint16: (2, 16, false)
        case .uint24: (3, 24, false)
        case .uint32: (4, 32, false)
        case .uint48: (6, 48, false)
        case .uint64: (8, 64, false)
        case .uint128: (16, 128, false)
        case .sint8: (1, 8, true)
        case .sint12: (2, 12, true)
        case .sint16: (2, 16, true)
        case .sint24: (3, 24, true)
        case .sint32: (4, 32, true)
        case .sint48: (6, 48, true)
        case .sint64: (8, 64, true)
        case .sint128: (16, 128, true)
        default: nil
        }
    }
}
