import ArgumentParser
import CentralCommands

await CentralCommand.main()
