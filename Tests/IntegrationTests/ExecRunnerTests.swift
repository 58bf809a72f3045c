@testable import ANCSCommands
import BluetoothCore
import Foundation
import Testing
import TestSupport

/// `bareble-ancs run --exec`'s runner: what it does when its shell cannot start.
@Suite struct ExecRunnerTests {
    @Test("a run whose shell cannot start is counted and told with the reason, each time")
    func aRunThatCannotStartIsTold() {
        let told = Lock<[String]>([])
        let runner = ExecRunner(command: "true", shell: "/nonexistent/sh") { reason, failed in
            told.withLock { $0.append("\(failed): \(reason)") }
        }
        #expect(runner.run(input: "{}\n"))
        #expect(runner.run(input: "{}\n"))
        #expect(runner.finish(within: 10))
        #expect(runner.failed == 2)
        #expect(told.withLock { $0 } == [
            "1: cannot run /nonexistent/sh: No such file or directory",
            "2: cannot run /nonexistent/sh: No such file or directory",
        ])
    }

    @Test("a run that starts gets its input and is not counted as failed")
    func aRunThatStartsIsNotAFailure() throws {
        let file = TestScratch.path("exec-runner.out")
        let told = Lock(0)
        let runner = ExecRunner(command: "cat > '\(file)'") { _, _ in told.withLock { $0 += 1 } }
        #expect(runner.run(input: "{\"uid\":1}\n"))
        #expect(runner.finish(within: 10))
        #expect(runner.failed == 0)
        #expect(told.withLock { $0 } == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "{\"uid\":1}\n")
    }
}
