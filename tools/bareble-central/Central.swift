import ArgumentParser

public struct CentralCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bareble-central",
        abstract: "The central role of BareBLE: look at the controller, scan, connect, explore, pair.",
        discussion: """
            Every subcommand takes --transport SPEC (tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], \
            hci:N, hci-raw:N, virtual; BAREBLE_TRANSPORT sets a default) and --btsnoop FILE.
            """,
        subcommands: [Info.self, RawHCI.self, RawATT.self, Scan.self, Advertise.self, Connect.self, Explore.self, Read.self, Write.self, Subscribe.self, Pair.self, Bonds.self, AdaptersCommand.self]
    )

    public init() {}
}
