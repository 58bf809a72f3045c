import BluetoothCore

// Number-to-text helpers for descriptions. No Foundation here (core modules stay small for
// embedded images), so the decimal point is placed by hand; that also keeps a scaled
// integer exact ("23.45", not "23.449999").

func hex16(_ value: UInt16) -> String {
    Hex.string([UInt8(value >> 8), UInt8(value & 0xFF)])
}

func hex8(_ value: UInt8) -> String {
    Hex.string([value])
}

/// `mantissa` x 10^`exponent` written exactly: (2345, -2) -> "23.45", (-5, -3) -> "-0.005",
/// (12, 2) -> "1200". The exponent comes from a peer as an Int8, so it is bounded and the
/// zeros added are at most 128.
func decimalText(mantissa: Int128, exponent: Int) -> String {
    // The magnitude of Int128.min does not fit an Int128, so work in UInt128.
    decimalText(negative: mantissa < 0, magnitude: mantissa.magnitude, exponent: exponent)
}

func decimalText(negative: Bool, magnitude: UInt128, exponent: Int) -> String {
    var digits = String(magnitude)
    if exponent >= 0 {
        if magnitude != 0 { digits += String(repeating: "0", count: exponent) }
    } else {
        let fraction = -exponent
        if digits.count <= fraction {
            digits = String(repeating: "0", count: fraction - digits.count + 1) + digits
        }
        let split = digits.index(digits.endIndex, offsetBy: -fraction)
        digits = digits[..<split] + "." + digits[split...]
    }
    return negative ? "-" + digits : digits
}

/// Milliseconds to one decimal place, rounded half up, for values that are a fraction of
/// 1/1024 s: 768 -> "750", 1 -> "1".
func millisecondsText(fromUnitsOf1024th raw: UInt16) -> String {
    // Tenths of a millisecond, rounded: raw * 10000 / 1024.
    let tenths = (UInt32(raw) * 10_000 + 512) / 1024
    return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(tenths % 10)"
}
