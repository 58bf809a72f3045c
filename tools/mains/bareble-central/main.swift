import CentralCommands
import ToolSupport

await runTool(CentralCommand.self)
