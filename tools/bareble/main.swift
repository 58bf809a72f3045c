import ANCSCommands
import ArgumentParser
import BeaconCommands
import CentralCommands
import Glibc
import PeripheralCommands
import ToolSupport
import TraceCommands

// Every tool in one executable, as busybox does: one copy of the Swift runtime and of the
// stack instead of one per tool (README, "One static binary"). Called through a link named
// bareble-central (or -peripheral, -beacon, -ancs, -trace) it is that tool; called as
// `bareble` its first argument names the tool.
let tools: [(name: String, command: any AsyncParsableCommand.Type)] = [
    ("central", CentralCommand.self),
    ("peripheral", PeripheralCommand.self),
    ("beacon", BeaconTool.self),
    ("ancs", ANCSTool.self),
    ("trace", TraceCommand.self),
]

func tool(named name: Substring) -> (any AsyncParsableCommand.Type)? {
    tools.first { $0.name == name }?.command
}

func usage() -> String {
    let width = tools.map(\.name.count).max() ?? 0
    let lines = tools.map { "  \($0.name)\(String(repeating: " ", count: width - $0.name.count))  \($0.command.configuration.abstract)" }
    return """
        USAGE: bareble TOOL [ARGUMENTS...]   (or through a link named bareble-TOOL)

        TOOLS:
        \(lines.joined(separator: "\n"))

        `bareble TOOL --help` shows a tool's subcommands and options.
        """
}

let arguments = CommandLine.arguments
let calledAs = arguments.first?.split(separator: "/").last ?? ""
if calledAs.hasPrefix("bareble-"), let command = tool(named: calledAs.dropFirst("bareble-".count)) {
    await runTool(command, arguments: Array(arguments.dropFirst()))
} else if arguments.count > 1, let command = tool(named: arguments[1][...]) {
    await runTool(command, arguments: Array(arguments.dropFirst(2)))
} else if arguments.count > 1, ["-h", "--help", "help"].contains(arguments[1]) {
    print(usage())
} else {
    let problem = arguments.count > 1 ? "bareble: no tool named \"\(arguments[1])\"\n" : ""
    printError(problem + usage())
    // EX_USAGE, as the tools' own argument errors exit.
    exit(64)
}
