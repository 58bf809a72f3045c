import BluetoothCore
import Testing
import TestSupport

/// JSON text as the tools print it and the bond store keeps it, and the reader of files we
/// wrote and of the virtual radio's lines: total on anything.
@Suite struct JSONTests {
    @Test func jsonTextIsEscapedAndSeparated() {
        let value = JSONValue.object([
            ("name", .string("a\"b\\c\n\u{01}é")), ("n", .int(-120)), ("list", .array([.bool(true), .null, .decimal(1.5, places: 2)])),
            ("empty", .object([])),
        ])
        #expect(value.text == #"{"name":"a\"b\\c\n\u0001é","n":-120,"list":[true,null,1.50],"empty":{}}"#)
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("data")
        writer.hex([0x00, 0xAB, 0x10])
        writer.member("zero")
        writer.int(0)
        writer.endObject()
        writer.newline()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\"data\":\"00AB10\",\"zero\":0}\n")
    }

    /// The layout of the bond files Foundation's pretty-printing JSONEncoder wrote (the
    /// bond store's damage tests edit `"version" : 1` in it), empty containers excepted.
    @Test func indentedTextHasFoundationsPrettyLayout() throws {
        let value = JSONValue.object([
            ("bonds", .array([.object([("a", .int(1)), ("b", .object([("c", .string("d"))]))])])),
            ("empty", .array([])), ("version", .int(1)),
        ])
        #expect(value.text(indented: true) == """
            {
              "bonds" : [
                {
                  "a" : 1,
                  "b" : {
                    "c" : "d"
                  }
                }
              ],
              "empty" : [],
              "version" : 1
            }
            """)
        #expect(try JSONValue(parsing: value.text(indented: true)) == value)
    }

    @Test func parsesTheVirtualRadiosReadyLine() throws {
        let line = #"{"event": "ready", "tcp": 4000, "pty": null, "ok": true, "s": "a\"b\u0041", "n": [1, {"x": -2.5}]}"#
        let value = try JSONValue(parsing: line)
        #expect(value["event"]?.stringValue == "ready")
        #expect(value["tcp"]?.intValue == 4000)
        #expect(value["pty"] == .null)
        #expect(value["ok"]?.boolValue == true)
        #expect(value["s"]?.stringValue == "a\"bA")
        #expect(value["n"]?.arrayValue?.count == 2)
        #expect(value["missing"] == nil)
        #expect(try JSONValue(parsing: " {} ") == .object([]))
    }

    @Test(arguments: [
        "", "{", "{\"a\"}", "{\"a\": }", "{\"a\": 1} x", "{\"a\": \"x", "[1,]", "[1 2]", "{\"a\" 1}", "{1: 2}", "-", "tru",
        "\"\\u12\"", "\"\\uZZZZ\"", "\"abc\\", "nul", "+", ".e",
    ])
    func malformedTextIsRefused(_ text: String) {
        #expect(throws: JSONValue.ParseError.self, "\(text)") { try JSONValue(parsing: text) }
    }

    /// Nesting a peer or a damaged file could make arbitrarily deep is refused at
    /// ``JSONValue/maximumDepth`` instead of exhausting the stack.
    @Test func deepNestingIsRefusedNotRecursedInto() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: deep) }
        let allowed = String(repeating: "[", count: JSONValue.maximumDepth) + String(repeating: "]", count: JSONValue.maximumDepth)
        #expect(throws: Never.self) { try JSONValue(parsing: allowed) }
    }

    /// Random text from JSON's own alphabet, and random mutations of a valid document:
    /// every input parses or is refused, and what parses prints text that parses again.
    @Test func randomTextNeverTraps() throws {
        var random = SeededRandom(seed: 0x4A53_4F4E)
        let alphabet = Array("{}[]:,\"\\ \n0123456789-+.eEtrufalsn\u{0}\u{FFFD}abu".unicodeScalars)
        let document = Array(JSONValue.object([("k", .array([.int(1), .string("v\\\""), .null, .bool(false)])), ("x", .decimal(2.5, places: 1))]).text(indented: true).unicodeScalars)
        for round in 0..<20_000 {
            var scalars: [Unicode.Scalar]
            if round.isMultiple(of: 2) {
                scalars = (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            } else {
                scalars = document
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let at = Int.random(in: 0..<scalars.count, using: &random)
                    if Bool.random(using: &random) { scalars[at] = alphabet.randomElement(using: &random)! } else { scalars.remove(at: at) }
                    if scalars.isEmpty { break }
                }
            }
            let text = String(String.UnicodeScalarView(scalars))
            if let value = try? JSONValue(parsing: text) {
                #expect((try? JSONValue(parsing: value.text)) != nil, "\(text)")
            }
        }
    }
}
