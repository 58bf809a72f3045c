import Logging
import Testing
import ToolSupport

/// The tools' log level: -v flags, else $BAREBLE_LOG, else warnings only.
@Suite struct ToolLoggingTests {
    @Test func flagsWinOverTheEnvironment() throws {
        #expect(try ToolLogging.level(verbosity: 0, environment: nil) == .warning)
        #expect(try ToolLogging.level(verbosity: 0, environment: "") == .warning)
        #expect(try ToolLogging.level(verbosity: 0, environment: "trace") == .trace)
        #expect(try ToolLogging.level(verbosity: 0, environment: "DEBUG") == .debug)
        #expect(try ToolLogging.level(verbosity: 1, environment: "trace") == .info)
        #expect(try ToolLogging.level(verbosity: 2, environment: nil) == .debug)
        #expect(try ToolLogging.level(verbosity: 5, environment: nil) == .trace)
    }

    @Test func anUnknownLevelSaysWhichOnesExist() {
        #expect(throws: ToolError.self) { try ToolLogging.level(verbosity: 0, environment: "loud") }
        do {
            _ = try ToolLogging.level(verbosity: 0, environment: "loud")
        } catch {
            #expect(error.description == "BAREBLE_LOG=loud is not a level: use trace, debug, info or warning")
        }
    }
}
