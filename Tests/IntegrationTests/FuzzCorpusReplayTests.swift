import Foundation
import Testing
import TestSupport

/// Every input of the committed fuzz corpus (tools/fuzz/corpus/TARGET/, which keeps the
/// inputs of every crash the fuzzers found) through its target once, in the `bareble-fuzz`
/// of the ordinary debug build (no libFuzzer: its replay mode, one input per argument). A
/// trap, a violated invariant or a hang of the code under test fails the suite. Coverage-
/// guided exploration is `tools/fuzz.sh`, run by hand (specs/testing.md); this keeps what it
/// found from coming back, in every `swift test`.
@Suite struct FuzzCorpusReplay {
    static let executable = builtExecutable(named: "bareble-fuzz")
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/fuzz/corpus")

    @Test("every fuzz target has a committed corpus, and every corpus directory a target")
    func targetsAndCorpusAgree() async throws {
        let listed = try await TraceTool.run(Self.executable, ["--list"])
        #expect(listed.status == 0)
        let targets = Set(listed.output.split(separator: "\n").map(String.init))
        let directories = Set(try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path))
        #expect(targets.count >= 19, "\(targets)")
        #expect(targets == directories)
    }

    @Test("every committed input runs through its target without a crash", arguments: try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted())
    func replay(_ target: String) async throws {
        let directory = Self.corpus.appendingPathComponent(target)
        let inputs = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map { directory.appendingPathComponent($0).path }
        #expect(!inputs.isEmpty)
        let run = try await withDeadline("replaying \(inputs.count) \(target) inputs", seconds: 300) {
            try await TraceTool.run(Self.executable, [target] + inputs)
        }
        #expect(run.status == 0 && !run.signalled, "\(target): exit \(run.status)\n\(run.errors.suffix(2_000))")
        // One "PATH: ok" per input: the replay stops at the first that crashes.
        #expect(run.output.split(separator: "\n").filter { $0.hasSuffix(": ok") }.count == inputs.count)
    }
}
