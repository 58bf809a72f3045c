import ArgumentParser

public struct PeripheralCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bareble-peripheral",
        abstract: "The peripheral role of BareBLE: serve a GATT database to centrals.",
        discussion: """
            Every subcommand takes --transport SPEC (tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], \
            hci:N, virtual; BAREBLE_TRANSPORT sets a default) and --btsnoop FILE.
            """,
        subcommands: [Serve.self]
    )

    public init() {}
}
