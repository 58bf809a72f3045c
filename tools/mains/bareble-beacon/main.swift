import BeaconCommands
import ToolSupport

await runTool(BeaconTool.self)
