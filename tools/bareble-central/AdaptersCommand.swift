import ArgumentParser
import BluetoothCore
import HCITransport
import KernelHost
import ToolSupport

/// `bareble-central adapters`: the kernel's Bluetooth adapters, with no daemon: address,
/// state (up, down, held by another program) and bus; `--up N` / `--down N` first.
struct AdaptersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List the kernel's Bluetooth adapters (address, state, bus); bring one up or down first with --up/--down.",
        discussion: """
            Uses the kernel's HCI socket ioctls (HCIGETDEVLIST, HCIGETDEVINFO) and its management \
            interface (Set Powered) directly: no bluetoothd needed. An adapter that is up is used beside \
            the kernel as hci-raw:N; one that is down can be taken whole as hci:N. Up and down need \
            CAP_NET_ADMIN.
            """
    )

    @Option(help: "Power hciN on (as a managed adapter, so the kernel can pair on hci-raw links) before listing.")
    var up: Int?

    @Option(help: "Power hciN off before listing (through the management interface: the kernel disconnects its links first).")
    var down: Int?

    @Flag(help: "One JSON object per adapter, one per line.")
    var json = false

    func run() throws {
        do throws(TransportError) {
            // Through the management interface, so the kernel's SMP is there for hci-raw
            // links that ask for security (HCIDEVUP alone leaves it out).
            if let up { try KernelManagement.powerOnManaged(index: up) }
            if let down { try KernelManagement.powerOff(index: down) }
            let adapters = try Adapters.list()
            if json {
                for adapter in adapters { print(Self.json(adapter).text) }
            } else if adapters.isEmpty {
                print("no Bluetooth adapters (the virtual radio works without one: --transport virtual)")
            } else {
                print(Self.table(adapters))
            }
        } catch {
            throw ToolError(error.description)
        }
    }

    static func table(_ adapters: [AdapterInfo]) -> String {
        let rows = adapters.map { adapter in
            [adapter.name, adapter.address.description, adapter.state, "\(adapter.bus)" + (adapter.isPrimary ? "" : " (AMP)"), use(adapter)]
        }
        let header = ["ADAPTER", "ADDRESS", "STATE", "BUS", "USE AS"]
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// The transport spec that fits the adapter's state.
    static func use(_ adapter: AdapterInfo) -> String {
        if adapter.isHeld { return "(busy)" }
        return adapter.isUp ? "hci-raw:\(adapter.index)" : "hci:\(adapter.index)"
    }

    static func json(_ adapter: AdapterInfo) -> JSONValue {
        .object([
            ("index", .int(adapter.index)),
            ("name", .string(adapter.name)),
            ("address", .string(adapter.address.description)),
            ("state", .string(adapter.isHeld ? "held" : adapter.isUp ? "up" : "down")),
            ("bus", .string("\(adapter.bus)")),
            ("primary", .bool(adapter.isPrimary)),
        ])
    }
}
