import BluetoothCore

/// The Date attribute: the iPhone's local wall-clock time as "yyyyMMdd'T'HHmmSS" (UTS #35),
/// kept as calendar fields. No time zone travels with it, so none is invented here.
public struct ANCSDate: Sendable, Hashable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Parses exactly fifteen ASCII characters: eight digits, "T", six digits, each field
    /// within its calendar range (second 60 for a leap second).
    public init(text: [UInt8]) throws(DecodeError) {
        guard text.count == 15 else { throw .lengthMismatch(declared: 15, actual: text.count) }
        guard text[8] == UInt8(ascii: "T") else { throw .invalidValue(field: "ANCS date separator", value: Int(text[8])) }
        func number(_ range: Range<Int>, _ field: String, _ valid: ClosedRange<Int>) throws(DecodeError) -> Int {
            var value = 0
            for octet in text[range] {
                guard octet >= UInt8(ascii: "0"), octet <= UInt8(ascii: "9") else {
                    throw .invalidValue(field: "ANCS date \(field) digit", value: Int(octet))
                }
                value = value * 10 + Int(octet - UInt8(ascii: "0"))
            }
            guard valid.contains(value) else { throw .invalidValue(field: "ANCS date \(field)", value: value) }
            return value
        }
        year = try number(0..<4, "year", 0...9999)
        month = try number(4..<6, "month", 1...12)
        day = try number(6..<8, "day", 1...31)
        hour = try number(9..<11, "hour", 0...23)
        minute = try number(11..<13, "minute", 0...59)
        second = try number(13..<15, "second", 0...60)
    }

    /// ISO 8601 without a zone: "2025-01-02T03:04:05".
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }

    /// The wire form, "yyyyMMdd'T'HHmmSS".
    public var text: String {
        description.filter { $0 != "-" && $0 != ":" }
    }
}
