import ArgumentParser
import BeaconCommands

await BeaconTool.main()
