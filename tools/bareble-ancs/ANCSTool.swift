import ArgumentParser

public struct ANCSTool: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bareble-ancs",
        abstract: "Show an iPhone's notifications and act on them (Apple Notification Center Service), and follow its media (AMS).",
        discussion: """
            Every subcommand takes --transport SPEC (tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], \
            hci:N, virtual; BAREBLE_TRANSPORT sets a default) and --btsnoop FILE.
            """,
        subcommands: [Run.self]
    )

    public init() {}
}
