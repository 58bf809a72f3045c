import ArgumentParser

@main
struct Central: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bareble-central",
        abstract: "The central role of BareBLE: look at the controller, scan, connect, explore.",
        discussion: """
            Every subcommand takes --transport SPEC (tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], \
            hci:N, hci-raw:N, virtual; BAREBLE_TRANSPORT sets a default) and --btsnoop FILE.
            """,
        subcommands: [Info.self, Scan.self, Advertise.self, Connect.self, AdaptersCommand.self]
    )
}
