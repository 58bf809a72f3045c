import ArgumentParser
import BareBLE
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// `bareble-central connect ADDR`: make one connection as central, show what the link runs
/// with, optionally hold it, then disconnect.
struct Connect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to a device, show the connection's handle, role, timing, PHY, data length and ATT MTU, then disconnect.",
        discussion: """
            ADDRESS is AA:BB:CC:DD:EE:FF, optionally /public or /random. Without the suffix the \
            type is found by scanning for the device first (--scan-timeout). Ctrl-C during \
            --hold disconnects cleanly.
            """
    )

    @OptionGroup var device: PeripheralOptions

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(help: "Keep the connection this many seconds before disconnecting.")
    var hold: Double = 0

    @Option(name: .customLong("data-length"), help: "Ask for this many octets per link-layer packet (27 ... 251).")
    var dataLength: UInt16?

    @Flag(name: .customLong("2m"), help: "Ask to move the connection to LE 2M PHY.")
    var prefer2M = false

    @Flag(help: "Also read the peer's LE features.")
    var features = false

    func validate() throws {
        guard hold.isFinite, hold >= 0, hold < 1e6 else { throw ValidationError("--hold \(hold) is not a number of seconds") }
        if let dataLength, !(27...251).contains(dataLength) { throw ValidationError("--data-length \(dataLength) is outside 27 ... 251") }
    }

    func run() async throws {
        let options = ConnectionOptions(dataLength: dataLength, prefer2MPHY: prefer2M)
        let peripheral = try await device.connect(options: options) { _, peripheral in
            var remote: LEFeatures?
            if features, let connection = peripheral.connection {
                do {
                    remote = try await connection.readRemoteFeatures()
                } catch {
                    printError("could not read the peer's features: \(error)")
                }
            } else if peripheral.connection == nil, features || options != .none {
                printError("the kernel made this link (hci-raw): --features, --data-length and --2m need hci:N")
            }
            writeOut(json ? Self.json(peripheral, remote).text + "\n" : Self.text(peripheral, remote) + "\n")
            if hold > 0 { await StopRequest.wait(upTo: hold) }
            return peripheral
        }
        if !json, case let .disconnected(reason) = peripheral.state {
            writeOut("disconnected: \(reason.map { "\($0)" } ?? "unknown reason")\n")
        }
    }

    static func text(_ peripheral: Peripheral, _ features: LEFeatures?) -> String {
        guard let connection = peripheral.connection else {
            return [
                "connected to \(peripheral.identifier) through the kernel's L2CAP socket (hci-raw): the kernel chose the link's timing",
                "  ATT MTU              \(peripheral.mtu)",
            ].joined(separator: "\n")
        }
        let timing = connection.timing
        var lines = [
            "connected to \(connection.peer)",
            "  handle               \(handleText(connection.handle))",
            "  role                 \(connection.role)",
            "  interval             \(timing.connectionIntervalMilliseconds) ms",
            "  latency              \(timing.peripheralLatency)",
            "  supervision timeout  \(timing.supervisionTimeoutMilliseconds) ms",
            "  PHY                  \(connection.phy)",
            "  data length          \(connection.dataLength)",
            "  ATT MTU              \(peripheral.mtu)",
        ]
        if let features { lines.append("  peer features        \(features.names.joined(separator: ", "))") }
        return lines.joined(separator: "\n")
    }

    static func json(_ peripheral: Peripheral, _ features: LEFeatures?) -> JSONValue {
        guard let connection = peripheral.connection else {
            return .object([
                ("address", .string(peripheral.identifier.address.description)),
                ("addressType", .string(peripheral.identifier.type.description)),
                ("link", .string("kernel")),
                ("mtu", .int(Int(peripheral.mtu))),
            ])
        }
        let timing = connection.timing
        let length = connection.dataLength
        var members: [(String, JSONValue)] = [
            ("address", .string(connection.peer.address.description)),
            ("addressType", .string(connection.peer.type.description)),
            ("handle", .int(Int(connection.handle))),
            ("role", .string(connection.role.description)),
            ("connectionIntervalMicroseconds", .int(Int(timing.connectionInterval) * 1250)),
            ("peripheralLatency", .int(Int(timing.peripheralLatency))),
            ("supervisionTimeoutMilliseconds", .int(timing.supervisionTimeoutMilliseconds)),
            ("txPHY", .string(connection.phy.tx.description)),
            ("rxPHY", .string(connection.phy.rx.description)),
            ("maxTxOctets", .int(Int(length.maxTxOctets))),
            ("maxRxOctets", .int(Int(length.maxRxOctets))),
            ("mtu", .int(Int(peripheral.mtu))),
        ]
        if let features { members.append(("peerFeatures", .array(features.names.map(JSONValue.string)))) }
        return .object(members)
    }
}
