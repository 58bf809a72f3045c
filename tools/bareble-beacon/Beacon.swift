import ArgumentParser

public struct BeaconTool: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bareble-beacon",
        abstract: "iBeacon and Eddystone: transmit, range, monitor regions, calibrate.",
        discussion: """
            Every subcommand takes --transport SPEC (tcp:HOST:PORT, serial:/dev/ttyX[,BAUD][,rtscts], \
            hci:N, hci-raw:N, virtual; BAREBLE_TRANSPORT sets a default) and --btsnoop FILE. \
            Ranging, monitoring and calibration scan passively with every report kept (no \
            duplicate filtering): each advertisement is an RSSI sample.
            """,
        subcommands: [AdvertiseBeacon.self, Range.self, Monitor.self, Calibrate.self]
    )

    public init() {}
}
