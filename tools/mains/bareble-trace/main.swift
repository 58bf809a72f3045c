import ArgumentParser
import TraceCommands

await TraceCommand.main()
