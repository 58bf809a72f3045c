/// A Bluetooth Core Specification version as HCI_Version, LMP_Version and the LL version
/// number it (Bluetooth SIG Assigned Numbers, 2.1 "Link Layer / LMP / HCI version").
///
/// The three fields share one numbering, so ``LMPVersion`` is the same type.
public struct HCIVersion: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let v1_0b = HCIVersion(0x00)
    public static let v1_1 = HCIVersion(0x01)
    public static let v1_2 = HCIVersion(0x02)
    public static let v2_0EDR = HCIVersion(0x03)
    public static let v2_1EDR = HCIVersion(0x04)
    public static let v3_0HS = HCIVersion(0x05)
    public static let v4_0 = HCIVersion(0x06)
    public static let v4_1 = HCIVersion(0x07)
    public static let v4_2 = HCIVersion(0x08)
    public static let v5_0 = HCIVersion(0x09)
    public static let v5_1 = HCIVersion(0x0A)
    public static let v5_2 = HCIVersion(0x0B)
    public static let v5_3 = HCIVersion(0x0C)
    public static let v5_4 = HCIVersion(0x0D)
    public static let v6_0 = HCIVersion(0x0E)
    public static let v6_1 = HCIVersion(0x0F)
    public static let v6_2 = HCIVersion(0x10)

    // Indexed by the version number; the list only ever grows at the end.
    private static let names = [
        "1.0b", "1.1", "1.2", "2.0+EDR", "2.1+EDR", "3.0+HS", "4.0", "4.1", "4.2",
        "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.1", "6.2",
    ]

    /// The specification version ("5.4"), or nil for a number this table does not know.
    public var versionName: String? {
        Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : nil
    }

    /// "5.4", or "unknown (0x11)" for a number newer than this table.
    public var description: String { Self.name(for: rawValue) }

    /// "5.4", or "unknown (0xNN)".
    public static func name(for version: UInt8) -> String {
        HCIVersion(version).versionName ?? "unknown (\(reservedValueHex(version)))"
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// LMP_Version / LL version numbers: the same assigned numbers as ``HCIVersion``.
public typealias LMPVersion = HCIVersion
