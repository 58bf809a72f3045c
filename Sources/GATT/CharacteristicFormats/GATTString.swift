/// UTF-8 text characteristics and descriptors (Device Name, the Device Information
/// strings, Characteristic User Description; format utf8s).
public enum GATTString {
    /// Never fails: invalid UTF-8 becomes U+FFFD, as an explorer should still show the rest.
    /// Trailing NUL bytes are dropped because much firmware sends C strings with their
    /// terminator, which the specification does not have; a NUL inside the text is kept.
    public static func decode(_ bytes: [UInt8]) -> String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
