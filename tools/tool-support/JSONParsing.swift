import Glibc

/// Reads JSON text into a ``JSONValue`` (for files the tools write themselves, such as
/// `bareble-central explore --json`). Bounded: nesting deeper than ``maximumDepth`` and
/// files larger than ``maximumFileSize`` are refused with a message, never a crash.
extension JSONValue {
    public static let maximumDepth = 64
    public static let maximumFileSize = 16 << 20

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(parsing text: String) throws(ParseError) {
        var parser = Parser(scalars: Array(text.unicodeScalars))
        self = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.scalars.count else { throw parser.error("text after the value") }
    }

    /// The whole file at `path`, parsed.
    public init(contentsOf path: String) throws(ParseError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ParseError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ParseError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= Self.maximumFileSize else { throw ParseError(description: "\(path) is larger than \(Self.maximumFileSize) bytes") }
        }
        try self.init(parsing: String(decoding: bytes, as: UTF8.self))
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
