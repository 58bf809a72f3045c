import ArgumentParser

public struct TraceCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bareble-trace",
        abstract: "Decode what crosses the HCI with BareBLE's own decoders: captures, pipes and the live monitor channel.",
        discussion: """
            read FILE|- decodes a btsnoop (1001, 1002, 2001), pcap or pcapng (linktypes 201, 254) \
            capture, or standard input; live decodes the kernel's monitor channel (every adapter; \
            needs CAP_NET_RAW). One line per packet (-v adds the fields), or one JSON object per \
            packet with --json. stats FILE|- sums a capture up per connection and advertiser; \
            gatt FILE|- rebuilds the peer's GATT database from the discovery it holds.
            """,
        subcommands: [Read.self, Live.self, Stats.self, GATTCommand.self]
    )

    public init() {}
}
