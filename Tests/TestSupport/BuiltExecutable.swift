import Foundation

/// The path of an executable product built beside the test bundle (the build folder), for
/// tests that run a tool or a helper process as a user would.
public func builtExecutable(named name: String) -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) {
        let up = directory.deletingLastPathComponent()
        if up.path == directory.path { break }
        directory = up
    }
    return directory.appendingPathComponent(name).path
}
