/// Number formatting for the benchmark's report (the tools use no Foundation).
func fixed(_ value: Double, _ decimals: Int = 0) -> String {
    guard value.isFinite else { return value.isNaN ? "n/a" : "inf" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    var text = (value < 0 && scaled != 0 ? "-" : "") + grouped(whole)
    if decimals > 0 {
        let fraction = Int(scaled) - whole * Int(scale)
        let digits = String(fraction)
        text += "." + String(repeating: "0", count: decimals - digits.count) + digits
    }
    return text
}

/// 1234567 -> "1,234,567".
func grouped(_ value: Int) -> String {
    let digits = Array(String(value))
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return out
}

func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}
