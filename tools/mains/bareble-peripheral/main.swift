import ArgumentParser
import PeripheralCommands

await PeripheralCommand.main()
