/// A number with a fixed count of decimals, without Foundation's formatters (the tools stay
/// Foundation-free for small embedded images). Non-finite values read "-".
public func fixedPoint(_ value: Double, places: Int) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1
    for _ in 0..<max(0, places) { scale *= 10 }
    let scaled = (abs(value) * Double(scale)).rounded()
    // Beyond this an Int would overflow; such numbers are not worth decimals anyway.
    guard scaled < 9e15 else { return String(value) }
    let units = Int(scaled)
    var text = (value < 0 && units != 0 ? "-" : "") + String(units / scale)
    if places > 0 {
        let fraction = String(units % scale)
        text += "." + String(repeating: "0", count: places - fraction.count) + fraction
    }
    return text
}
