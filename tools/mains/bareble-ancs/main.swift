import ArgumentParser
import ANCSCommands

await ANCSTool.main()
