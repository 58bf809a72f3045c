import TraceCommands
import ToolSupport

await runTool(TraceCommand.self)
