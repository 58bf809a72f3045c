import ArgumentParser

@main
struct BeaconTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bareble-beacon",
        abstract: "iBeacon and Eddystone: transmit, range, monitor regions, calibrate.",
        subcommands: []
    )
}
