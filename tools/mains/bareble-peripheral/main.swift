import PeripheralCommands
import ToolSupport

await runTool(PeripheralCommand.self)
