import ANCSCommands
import ToolSupport

await runTool(ANCSTool.self)
