/// The external appearance of a device (Core Specification Supplement Part A 1.12;
/// values in Assigned Numbers 2.6): a 10-bit category and a 6-bit subcategory.
public struct Appearance: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 16-bit value as carried in the Appearance AD type and GAP characteristic.
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public init(category: UInt16, subcategory: UInt8) {
        self.rawValue = (category & 0x3FF) << 6 | UInt16(subcategory & 0x3F)
    }

    public static let unknown = Appearance(0x0000)

    /// Same as ``rawValue``.
    public var value: UInt16 { rawValue }
    /// Bits 15 to 6.
    public var category: UInt16 { rawValue >> 6 }
    /// Bits 5 to 0.
    public var subcategory: UInt8 { UInt8(rawValue & 0x3F) }

    /// The category's name ("Human Interface Device"), nil when unassigned.
    public var categoryName: String? { Self.names.categories[category]?.name }

    /// The subcategory's name ("Keyboard"), nil for subcategory 0 or when unassigned.
    public var subcategoryName: String? { Self.names.categories[category]?.subcategories[subcategory] }

    /// A name for any value: "Keyboard", "Generic Heart Rate Sensor" (subcategory 0),
    /// "Unknown" (0x0000), "Phone (subcategory 0x05)" for an unassigned subcategory and
    /// "Reserved (0xFFC0)" for an unassigned category.
    public var name: String {
        guard let category = Self.names.categories[category] else {
            return "Reserved (0x\(Hex.string([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])))"
        }
        if subcategory == 0 {
            return self.category == 0 ? category.name : "Generic \(category.name)"
        }
        return category.subcategories[subcategory] ?? "\(category.name) (subcategory 0x\(Hex.string([subcategory])))"
    }

    public var description: String { name }
}
