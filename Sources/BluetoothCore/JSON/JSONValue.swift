/// A JSON value and its text: --json output, the bond store's files, the virtual radio's
/// lines. Small on purpose: nothing of BareBLE needs Foundation's JSON, so the static
/// tools stay small for embedded images (README, "One static binary").
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    /// A fractional number written with this many decimals (null when not finite).
    case decimal(Double, places: Int)
    case string(String)
    case array([JSONValue])
    /// Keys keep the order given, so output is stable and reads like the human form.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.text == rhs.text }

    /// Compact JSON text, one line.
    public var text: String { text(indented: false) }

    /// JSON text, one line or indented (``JSONWriter/init(indented:)``).
    public func text(indented: Bool) -> String {
        var writer = JSONWriter(indented: indented)
        write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.null()
        case let .bool(value): writer.bool(value)
        case let .int(value): writer.int(value)
        case let .decimal(value, places): value.isFinite ? writer.raw(fixedPoint(value, places: places)) : writer.null()
        case let .string(value): writer.string(value)
        case let .array(values):
            writer.beginArray()
            for value in values { value.write(to: &writer) }
            writer.endArray()
        case let .object(members):
            writer.beginObject()
            for (key, value) in members {
                writer.key(key)
                value.write(to: &writer)
            }
            writer.endObject()
        }
    }
}
