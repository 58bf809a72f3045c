import ArgumentParser
import BluetoothCore
import ToolSupport
import Trace

struct GATTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Rebuild a peer's GATT database from the discovery and reads a capture holds, as `bareble-central explore --json` prints it.",
        discussion: """
            Services (Read By Group Type), includes and characteristics (Read By Type), \
            descriptors (Find Information), the Database Hash, the values and descriptor values \
            read (Read, Read Blob) and the reads refused (Error Response), answered by the peer \
            to our requests. One connection is rebuilt: the first that holds a primary service \
            discovery, among those --address or --connection admit (all by default); the \
            others, and what follows its disconnection, are left out. The output is what \
            `bareble-peripheral serve --database FILE` serves again.
            """
    )

    @Argument(help: "A btsnoop, pcap or pcapng file, or - for standard input.")
    var file: String

    @Option(name: .long, help: "The peer whose database to rebuild (its first connection with a discovery).")
    var address: String?

    @Option(name: .long, help: "The connection handle whose database to rebuild (the first connection on it with a discovery).")
    var connection: UInt16?

    func validate() throws {
        if address != nil && connection != nil { throw ValidationError("--address and --connection exclude each other") }
        if let address, BluetoothAddress(address) == nil { throw ValidationError("--address \(address) is not an address like C4:4B:4D:00:00:01") }
    }

    func run() throws {
        let choice: TraceGATTDatabase.Choice = if let address = address.flatMap(BluetoothAddress.init) {
            .address(address)
        } else if let connection {
            .connection(connection)
        } else {
            .first
        }
        var decoder = TraceDecoder(withFields: false)
        var rebuilder = TraceGATTDatabase(choosing: choice)
        try readCapture(file) { record in rebuilder.add(decoder.decode(record)) }
        let rebuilt: TraceGATTDatabase.Result?
        do {
            rebuilt = try rebuilder.result()
        } catch {
            throw ToolError("\(file): the discovery in the capture does not make a database: \(error)")
        }
        guard let rebuilt else {
            let whose = switch choice {
            case .first: "any connection"
            case .address(let address): "a connection to \(address)"
            case .connection(let handle): "a connection on handle \(handle)"
            }
            throw ToolError("\(file) holds no primary service discovery on \(whose): capture a `bareble-central explore` (--btsnoop), or choose another with --address or --connection")
        }
        writeOut(ExploredDatabase(rebuilt).json.text + "\n")
    }
}
