/// Something in advertising data that does not follow the Core Specification Supplement
/// Part A or Core Vol 3 Part C 11.
///
/// Malformations never stop decoding: every accessor still returns the well-formed part.
/// They exist so a tracing tool can say what a peer got wrong and where.
public struct ADMalformation: Hashable, Sendable, CustomStringConvertible {
    /// Offset of the length octet of the structure at fault (or of the zero length octet
    /// that ended the significant part).
    public let offset: Int
    /// The structure's type, when the problem lies in its content.
    public let type: ADType?
    public let reason: Reason

    public init(offset: Int, type: ADType?, reason: Reason) {
        self.offset = offset
        self.type = type
        self.reason = reason
    }

    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The length octet announces more bytes than remain; this structure and anything
        /// after it are ignored.
        case structureRunsPastEnd(declaredLength: Int, available: Int)
        /// A zero length octet ends the significant part (Core Vol 3 Part C 11) yet
        /// `count` non-zero bytes follow it; they are ignored.
        case nonZeroAfterTerminator(count: Int)
        /// The data must be exactly `expected` bytes long.
        case wrongLength(expected: ClosedRange<Int>, actual: Int)
        /// The data must be at least `minimum` bytes long (a UUID, a company identifier).
        case tooShort(minimum: Int, actual: Int)
        /// A list of `elementSize`-byte items whose length leaves `leftover` bytes; the
        /// whole items are kept.
        case partialElement(elementSize: Int, leftover: Int)
        /// Text that is not valid UTF-8; decoded with U+FFFD replacements.
        case invalidUTF8
        /// A URI that does not start with a scheme code point (Supplement Part A 1.18).
        case missingURIScheme
        /// A URI scheme code point that is not in the Assigned Numbers URI scheme table.
        case unassignedURIScheme(UInt32)

        public var description: String {
            switch self {
            case let .structureRunsPastEnd(declared, available):
                "length \(declared) runs past the end (\(available) byte(s) follow the length octet)"
            case let .nonZeroAfterTerminator(count):
                "\(count) non-zero byte(s) after the zero length octet that ends the data"
            case let .wrongLength(expected, actual):
                expected.lowerBound == expected.upperBound
                    ? "data is \(actual) byte(s), must be \(expected.lowerBound)"
                    : "data is \(actual) byte(s), must be \(expected.lowerBound) to \(expected.upperBound)"
            case let .tooShort(minimum, actual):
                "data is \(actual) byte(s), must be at least \(minimum)"
            case let .partialElement(size, leftover):
                "\(leftover) byte(s) left over after the whole \(size)-byte items"
            case .invalidUTF8: "text is not valid UTF-8"
            case .missingURIScheme: "URI has no scheme code point"
            case let .unassignedURIScheme(code): "URI scheme code point U+\(Hex.string(Self.bigEndian(code))) is unassigned"
            }
        }

        private static func bigEndian(_ value: UInt32) -> [UInt8] {
            [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
    }

    public var description: String {
        let at = "offset \(offset)"
        guard let type else { return "\(at): \(reason)" }
        return "\(at), \(type): \(reason)"
    }
}
