import Foundation

/// Where tests put their files: one directory per test process,
/// `$TMPDIR/bareble-tests/PID`, so a run leaves one entry behind instead of hundreds. The
/// newest ``keptRuns`` runs are kept (their captures, bond files and kernel-lane job show
/// what a failed run did); older ones are removed when the next run first asks for a path,
/// unless their process still runs.
public enum TestScratch {
    public static let keptRuns = 3

    /// This run's directory, created (and the old runs pruned) on first use.
    public static let root: String = {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("bareble-tests").path
        pruneOldRuns(in: parent)
        let own = parent + "/\(getpid())"
        try? FileManager.default.removeItem(atPath: own)  // an earlier process with our PID
        try? FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
        return own
    }()

    /// A fresh path under this run's directory, not created yet: a random prefix and `name`
    /// (so its extension stays last). For a path two calls must agree on, use `root + "/" + name`.
    public static func path(_ name: String) -> String {
        root + "/\(UInt32.random(in: 0...UInt32.max))-\(name)"
    }

    private static func pruneOldRuns(in parent: String) {
        let files = FileManager.default
        let runs = ((try? files.contentsOfDirectory(atPath: parent)) ?? []).compactMap { name -> (path: String, pid: Int32, modified: Date)? in
            guard let pid = Int32(name) else { return nil }
            let path = parent + "/" + name
            let modified = (try? files.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            return (path, pid, modified ?? .distantPast)
        }
        for run in runs.sorted(by: { $0.modified > $1.modified }).dropFirst(keptRuns - 1) where kill(run.pid, 0) != 0 {
            try? files.removeItem(atPath: run.path)
        }
    }
}

/// A fresh path for a bond store's or a tool's state directory, not created yet.
public func scratchDirectory(_ name: String = #function) -> String {
    TestScratch.path("bonds-" + name.filter { $0.isLetter || $0.isNumber })
}
