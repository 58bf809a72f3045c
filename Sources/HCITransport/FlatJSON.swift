/// Parses one flat JSON object of scalars, `{"event": "ready", "tcp": 4000}`: what the
/// virtual radio prints. Nested values make it return nil. Small on purpose, so the
/// transport module needs no Foundation.
enum FlatJSON {
    enum Value: Hashable {
        case string(String)
        case number(String)
        case bool(Bool)
        case null

        var string: String? { if case let .string(text) = self { text } else { nil } }
        var integer: Int? { if case let .number(text) = self { Int(text) } else { nil } }
    }

    static func parse(_ text: String) -> [String: Value]? {
        var scalars = Array(text.unicodeScalars)[...]
        func skipSpace() {
            while let first = scalars.first, first == " " || first == "\t" || first == "\r" || first == "\n" {
                scalars = scalars.dropFirst()
            }
        }
        func expect(_ character: Unicode.Scalar) -> Bool {
            skipSpace()
            guard scalars.first == character else { return false }
            scalars = scalars.dropFirst()
            return true
        }
        func parseString() -> String? {
            guard expect("\"") else { return nil }
            var out = String.UnicodeScalarView()
            while let scalar = scalars.popFirst() {
                switch scalar {
                case "\"": return String(out)
                case "\\":
                    guard let escaped = scalars.popFirst() else { return nil }
                    switch escaped {
                    case "n": out.append("\n")
                    case "t": out.append("\t")
                    case "r": out.append("\r")
                    case "b": out.append("\u{08}")
                    case "f": out.append("\u{0C}")
                    case "u":
                        let digits = String(String.UnicodeScalarView(scalars.prefix(4)))
                        guard digits.count == 4, let code = UInt32(digits, radix: 16),
                            let decoded = Unicode.Scalar(code)
                        else { return nil }
                        scalars = scalars.dropFirst(4)
                        out.append(decoded)
                    default: out.append(escaped)
                    }
                default: out.append(scalar)
                }
            }
            return nil
        }
        func parseValue() -> Value? {
            skipSpace()
            guard let first = scalars.first else { return nil }
            if first == "\"" { return parseString().map(Value.string) }
            var word = String.UnicodeScalarView()
            while let scalar = scalars.first, scalar != ",", scalar != "}", scalar != " ", scalar != "\t" {
                word.append(scalar)
                scalars = scalars.dropFirst()
            }
            let text = String(word)
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default:
                guard !text.isEmpty, Double(text) != nil else { return nil }
                return .number(text)
            }
        }

        guard expect("{") else { return nil }
        var object: [String: Value] = [:]
        if expect("}") { return object }
        repeat {
            guard let key = parseString(), expect(":"), let value = parseValue() else { return nil }
            object[key] = value
        } while expect(",")
        guard expect("}") else { return nil }
        skipSpace()
        return scalars.isEmpty ? object : nil
    }
}
