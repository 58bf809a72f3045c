/// Reads JSON text into a ``JSONValue``: files we write ourselves (bond files, what a bond
/// keeps of a GATT client, `bareble-central explore --json`) and the virtual radio's
/// lines. Total: nesting deeper than ``maximumDepth`` and anything that is not JSON are
/// refused with a message, never a crash; callers bound the text's size.
extension JSONValue {
    public static let maximumDepth = 64

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    public init(parsing text: String) throws(ParseError) {
        var parser = Parser(scalars: Array(text.unicodeScalars))
        self = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.scalars.count else { throw parser.error("text after the value") }
    }

    /// The member `key` of an object, nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? { if case let .string(text) = self { text } else { nil } }
    public var intValue: Int? { if case let .int(value) = self { value } else { nil } }
    public var boolValue: Bool? { if case let .bool(value) = self { value } else { nil } }
    public var arrayValue: [JSONValue]? { if case let .array(values) = self { values } else { nil } }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0

        func error(_ what: String) -> ParseError { ParseError(description: "JSON: \(what) at character \(index)") }

        mutating func skipSpace() {
            while index < scalars.count, [" ", "\t", "\r", "\n"].contains(scalars[index]) { index += 1 }
        }

        mutating func take(_ word: String) -> Bool {
            let wanted = Array(word.unicodeScalars)
            guard index + wanted.count <= scalars.count, Array(scalars[index..<index + wanted.count]) == wanted else { return false }
            index += wanted.count
            return true
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw error("nesting deeper than \(JSONValue.maximumDepth)") }
            skipSpace()
            guard index < scalars.count else { throw error("end of text where a value belongs") }
            switch scalars[index] {
            case "{":
                index += 1
                var members: [(String, JSONValue)] = []
                skipSpace()
                if take("}") { return .object(members) }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    guard take(":") else { throw error("':' expected") }
                    members.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    if take("}") { return .object(members) }
                    guard take(",") else { throw error("',' or '}' expected") }
                }
            case "[":
                index += 1
                var values: [JSONValue] = []
                skipSpace()
                if take("]") { return .array(values) }
                while true {
                    values.append(try value(depth: depth + 1))
                    skipSpace()
                    if take("]") { return .array(values) }
                    guard take(",") else { throw error("',' or ']' expected") }
                }
            case "\"": return .string(try string())
            case "t" where take("true"): return .bool(true)
            case "f" where take("false"): return .bool(false)
            case "n" where take("null"): return .null
            default: return try number()
            }
        }

        mutating func string() throws(ParseError) -> String {
            guard take("\"") else { throw error("'\"' expected") }
            var out = String.UnicodeScalarView()
            while index < scalars.count {
                let scalar = scalars[index]
                index += 1
                switch scalar {
                case "\"": return String(out)
                case "\\":
                    guard index < scalars.count else { break }
                    let escaped = scalars[index]
                    index += 1
                    switch escaped {
                    case "n": out.append("\n")
                    case "t": out.append("\t")
                    case "r": out.append("\r")
                    case "b": out.append("\u{08}")
                    case "f": out.append("\u{0C}")
                    case "u":
                        guard index + 4 <= scalars.count, let code = UInt32(String(String.UnicodeScalarView(scalars[index..<index + 4])), radix: 16) else {
                            throw error("bad \\u escape")
                        }
                        index += 4
                        out.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    default: out.append(escaped)
                    }
                default: out.append(scalar)
                }
            }
            throw error("unterminated string")
        }

        mutating func number() throws(ParseError) -> JSONValue {
            let start = index
            while index < scalars.count, "+-0123456789.eE".unicodeScalars.contains(scalars[index]) { index += 1 }
            let text = String(String.UnicodeScalarView(scalars[start..<index]))
            if let value = Int(text) { return .int(value) }
            if let value = Double(text) { return .decimal(value, places: 6) }
            index = start
            throw error("unexpected character '\(index < scalars.count ? String(scalars[index]) : "")'")
        }
    }
}
