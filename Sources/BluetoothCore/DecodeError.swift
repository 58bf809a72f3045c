/// Why bytes from a controller or a peer could not be decoded.
///
/// Every decoder in BareBLE is total: it returns a value or throws one of these, and never
/// traps or reads past the end of its input.
public enum DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ended before a field: `needed` more bytes were required, `available` remained.
    case truncated(needed: Int, available: Int)
    /// A length field announced more (or less) than the input holds.
    case lengthMismatch(declared: Int, actual: Int)
    /// A field holds a value the specification does not allow here.
    case invalidValue(field: String, value: Int)
    /// Bytes were left over after a fixed-size structure.
    case trailingBytes(count: Int)

    public var description: String {
        switch self {
        case let .truncated(needed, available):
            return "truncated input: needed \(needed) more byte(s), \(available) left"
        case let .lengthMismatch(declared, actual):
            return "length field says \(declared) byte(s) but \(actual) are present"
        case let .invalidValue(field, value):
            return "invalid \(field): \(value)"
        case let .trailingBytes(count):
            return "\(count) unexpected trailing byte(s)"
        }
    }
}
