import ArgumentParser
import BluetoothCore
import Glibc
import HCI
import Synchronization
import ToolSupport

/// `bareble-central connect ADDR`: make one connection as central, show what the link runs
/// with, optionally hold it, then disconnect.
struct Connect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to a device, show the connection's handle, role, timing, PHY and data length, then disconnect.",
        discussion: """
            ADDRESS is AA:BB:CC:DD:EE:FF, optionally /public or /random. Without the suffix the \
            type is found by scanning for the device first (--scan-timeout). Ctrl-C during \
            --hold disconnects cleanly.
            """
    )

    @OptionGroup var options: TransportOptions

    @Argument(help: "The device: AA:BB:CC:DD:EE:FF[/public|/random].")
    var address: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(help: "Keep the connection this many seconds before disconnecting.")
    var hold: Double = 0

    @Option(help: "Give up connecting after this many seconds.")
    var timeout: Double = 10

    @Option(name: .customLong("scan-timeout"), help: "Seconds to scan for the address type when ADDRESS has no /public or /random.")
    var scanTimeout: Double = 5

    @Option(name: .customLong("data-length"), help: "Ask for this many octets per link-layer packet (27 ... 251).")
    var dataLength: UInt16?

    @Flag(name: .customLong("2m"), help: "Ask to move the connection to LE 2M PHY.")
    var prefer2M = false

    @Flag(help: "Also read the peer's LE features.")
    var features = false

    func validate() throws {
        guard DeviceAddress(address) != nil else {
            throw ValidationError("\(address) is not an address: use AA:BB:CC:DD:EE:FF, optionally /public or /random")
        }
        for (name, value) in [("--hold", hold), ("--timeout", timeout), ("--scan-timeout", scanTimeout)] {
            guard value.isFinite, value >= 0, value < 1e6 else { throw ValidationError("\(name) \(value) is not a number of seconds") }
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
        if let dataLength, !(27...251).contains(dataLength) { throw ValidationError("--data-length \(dataLength) is outside 27 ... 251") }
    }

    func run() async throws {
        let controller = try options.openController()
        defer { controller.close() }
        do {
            try await controller.powerOn()
        } catch {
            throw ToolError(error.description)
        }
        let peer = try await resolve(on: controller)
        let connector = Connector(controller: controller)
        let connection: Connection
        do {
            connection = try await connector.connect(
                to: peer, options: ConnectionOptions(dataLength: dataLength, prefer2MPHY: prefer2M),
                timeout: Self.duration(timeout))
        } catch {
            throw ToolError(error.description)
        }
        var remote: LEFeatures?
        if features {
            do {
                remote = try await connection.readRemoteFeatures()
            } catch {
                printError("could not read the peer's features: \(error)")
            }
        }
        writeOut(json ? Self.json(connection, remote).text + "\n" : Self.text(connection, remote) + "\n")
        if hold > 0 { await StopRequest.wait(upTo: hold) }
        do {
            try await connection.disconnect()
        } catch {
            throw ToolError("could not disconnect: \(error)")
        }
        if !json { writeOut("disconnected: \(connection.disconnectReason.map { "\($0)" } ?? "unknown reason")\n") }
    }

    /// The address as given, or with the type learned from its advertisements.
    func resolve(on controller: HCIController) async throws -> DeviceAddress {
        guard let given = DeviceAddress(address) else { throw ToolError("\(address) is not an address") }
        if address.contains("/") { return given }
        let scanner = Scanner(controller: controller)
        let found = Mutex<DeviceAddress?>(nil)
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let session: ScanSession
        do {
            let filter = ScanFilter(addresses: Set(Scan.addressesToMatch(address)), duplicates: .firstPerDevice)
            session = try await scanner.scan(matching: filter) { advertisement in
                found.withLock { $0 = $0 ?? advertisement.address }
                continuation.yield()
            }
        } catch {
            throw ToolError("cannot scan for \(address): \(error)")
        }
        let deadline = Task {
            try? await Task.sleep(for: Self.duration(scanTimeout))
            continuation.finish()
        }
        for await _ in stream { break }
        deadline.cancel()
        await session.stop()
        guard let peer = found.withLock({ $0 }) else {
            throw ToolError("\(address) was not heard within \(scanTimeout) s: is it advertising and in range? Give /public or /random to connect without scanning")
        }
        return peer
    }

    static func duration(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    static func handleText(_ handle: UInt16) -> String { "0x" + Hex.string([UInt8(handle >> 8), UInt8(handle & 0xFF)]) }

    static func text(_ connection: Connection, _ features: LEFeatures?) -> String {
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
        ]
        if let features { lines.append("  peer features        \(features.names.joined(separator: ", "))") }
        return lines.joined(separator: "\n")
    }

    static func json(_ connection: Connection, _ features: LEFeatures?) -> JSONValue {
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
        ]
        if let features { members.append(("peerFeatures", .array(features.names.map(JSONValue.string)))) }
        return .object(members)
    }
}
