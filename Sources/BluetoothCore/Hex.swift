/// Hexadecimal text for bytes, as tools print and accept it.
public enum Hex {
    @usableFromInline static let digits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends the digits ("0A1B2C") as ASCII bytes: for output built as bytes, with no
    /// String in between. Inlinable: it runs per byte of every advertisement a tool prints.
    @inlinable
    public static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
        for byte in bytes { append(byte, to: &out) }
    }

    @inlinable
    public static func append(_ byte: UInt8, to out: inout [UInt8]) {
        digits.withUnsafeBufferPointer { digits in
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
    }

    /// Appends the lowest `digits` hex digits of `value`, most significant first.
    @inlinable
    public static func append(_ value: UInt64, digits count: Int, to out: inout [UInt8]) {
        digits.withUnsafeBufferPointer { digits in
            for shift in stride(from: 4 * (count - 1), through: 0, by: -4) {
                out.append(digits[Int(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F])
            }
        }
    }

    /// "0A1B2C" (or "0A 1B 2C" with a separator). Written straight into the string's
    /// storage: the trace names a handle or an address this way on every packet.
    /// Inlinable, so each caller gets it specialised (generic, it looked types up per call).
    @inlinable
    public static func string<C: Collection>(_ bytes: C, separator: String = "") -> String where C.Element == UInt8 {
        let count = bytes.count
        guard count > 0 else { return "" }
        let length = 2 * count + (count - 1) * separator.utf8.count
        return String(unsafeUninitializedCapacity: length) { out in
            var index = 0
            for (position, byte) in bytes.enumerated() {
                if position > 0 {
                    for unit in separator.utf8 {
                        out[index] = unit
                        index += 1
                    }
                }
                out[index] = digits[Int(byte >> 4)]
                out[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }

    /// Four digits, most significant first ("0040"): a handle, a channel or a 16-bit code.
    public static func string(_ value: UInt16) -> String {
        string([UInt8(value >> 8), UInt8(value & 0xFF)])
    }

    /// Parses hex digits, ignoring spaces, colons, dashes and an optional "0x" prefix.
    /// Returns nil for an odd number of digits or a non-hex character.
    public static func bytes(_ text: String) -> [UInt8]? {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        var out: [UInt8] = []
        var high: UInt8?
        for scalar in body.unicodeScalars {
            let nibble: UInt8
            switch scalar {
            case "0"..."9": nibble = UInt8(scalar.value - 48)
            case "a"..."f": nibble = UInt8(scalar.value - 87)
            case "A"..."F": nibble = UInt8(scalar.value - 55)
            case " ", ":", "-", "\n", "\t": continue
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? out : nil
    }
}
