import Foundation

/// A fresh path under the system's temporary directory, not created yet: a bond store's or a
/// tool's state directory for one test.
public func scratchDirectory(_ name: String = #function) -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("bareble-bonds-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        .appendingPathComponent(name.filter { $0.isLetter || $0.isNumber }).path
}
