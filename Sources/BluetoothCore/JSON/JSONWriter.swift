/// JSON text written straight into a byte buffer: what `--json` output is built with, so a
/// line costs appends to one array rather than a tree of values and strings. Keys and
/// values go in the order written; commas are placed here.
public struct JSONWriter {
    @usableFromInline static let lowerHex = Array("0123456789abcdef".utf8)

    public var bytes: [UInt8] = []
    /// A value was written at this nesting level, so the next one needs a comma.
    @usableFromInline var needsComma = false
    /// A key was just written: its value follows on the same line, with no comma.
    @usableFromInline var afterKey = false
    /// Files a person reads or diffs (bond files) are indented: two spaces a level, a line
    /// per member or element, `"key" : value`, the layout Foundation's pretty-printing
    /// JSONEncoder gave the bond files written before.
    @usableFromInline let indented: Bool
    @usableFromInline var depth = 0

    /// One line (JSON lines), or `indented`.
    public init(indented: Bool = false) {
        self.indented = indented
    }

    @inlinable public mutating func beginObject() { open(UInt8(ascii: "{")) }
    @inlinable public mutating func endObject() { close(UInt8(ascii: "}")) }
    @inlinable public mutating func beginArray() { open(UInt8(ascii: "[")) }
    @inlinable public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// The key of the next member; its value follows.
    public mutating func key(_ key: String) {
        string(key)
        separateKey()
    }

    /// A key known when compiling (it must need no escaping): copied, not inspected.
    @inlinable
    public mutating func member(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        separateKey()
    }

    @inlinable
    public mutating func null() { literal("null") }
    @inlinable
    public mutating func bool(_ value: Bool) { literal(value ? "true" : "false") }

    @inlinable
    public mutating func int(_ value: Int) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // Filled from the end: 20 digits hold any 64-bit magnitude.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
        needsComma = true
    }

    /// A string value, escaped as JSON requires.
    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: then they are copied whole.
        let copied: Bool? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied != true { escape(value) }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func escape(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case ..<0x20:
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                          Self.lowerHex[Int(byte >> 4)], Self.lowerHex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
    }

    /// A string value of bytes that need no escaping (hex digits, a timestamp), written
    /// by `body` between the quotes.
    @inlinable
    public mutating func asciiString(_ body: (inout [UInt8]) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        body(&bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Bytes as a string of upper-case hex digits.
    @inlinable
    public mutating func hex(_ value: [UInt8]) {
        asciiString { Hex.append(value, to: &$0) }
    }

    /// Already-formatted JSON (a number with fixed decimals).
    public mutating func raw(_ text: String) { scalar(text) }

    /// Ends a line of JSON lines output.
    @inlinable
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        needsComma = false
    }

    private mutating func scalar(_ text: String) {
        separate()
        bytes += text.utf8
        needsComma = true
    }

    @inlinable
    mutating func literal(_ text: StaticString) {
        separate()
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        needsComma = true
    }

    @inlinable
    mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        depth += 1
        needsComma = false
    }

    @inlinable
    mutating func close(_ bracket: UInt8) {
        depth -= 1
        // A container with members ends on a line of its own; an empty one stays `[]`.
        if indented, needsComma { breakLine() }
        bytes.append(bracket)
        needsComma = true
    }

    @inlinable
    mutating func separateKey() {
        if indented { bytes.append(UInt8(ascii: " ")) }
        bytes.append(UInt8(ascii: ":"))
        if indented { bytes.append(UInt8(ascii: " ")) }
        needsComma = false
        afterKey = true
    }

    @inlinable
    mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        if indented, depth > 0 { breakLine() }
    }

    @usableFromInline
    mutating func breakLine() {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }
}
