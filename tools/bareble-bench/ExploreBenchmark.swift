import ArgumentParser
import ATT
import BluetoothCore
import GATT
import HCI
import HCITransport
import L2CAP

/// `bareble-bench explore`: the LightBlue-style full explore (discover everything, read
/// every readable characteristic and every descriptor) of the virtual radio's big peer,
/// by BareBLE over H4/TCP and by Bumble's GATT client on the same emulated air, in one run;
/// then BareBLE's cached reconnect.
struct ExploreBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explore",
        abstract: "ATT requests and time for a full explore of a 32-service / 224-characteristic peer, against Bumble's GATT client on the same peer."
    )

    @Option(help: "ATT_MTU both clients ask for.")
    var mtu: UInt16 = 517

    @Option(help: "Explores per client (the figures are the median).")
    var runs = 3

    static let peer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0004), type: .random)

    func validate() throws {
        guard (23...517).contains(mtu) else { throw ValidationError("--mtu \(mtu) is outside 23 ... 517") }
        guard runs > 0 else { throw ValidationError("--runs must be more than 0") }
    }

    func run() async throws {
        let radio = try VirtualRadio.launch(arguments: ["--tcp", "--big-peripheral"])
        defer { radio.stop() }
        let hci = HCIController(transport: try TCPTransport.connect(host: "127.0.0.1", port: radio.tcpPort))
        defer { hci.close() }
        try hci.start()
        try await hci.powerOn()
        let host = ControllerHost(controller: hci)
        let (manager, connector) = (host.channels, host.connector)
        print("bareble-bench explore: the virtual radio's big peer (\(Self.peer)), ATT_MTU \(mtu), \(runs) run(s) each, median shown")

        var ours: [Explore] = []
        var database: GATTDatabase?
        for _ in 0..<runs {
            let (explore, discovered) = try await exploreOnce(connector, manager, remembered: nil)
            ours.append(explore)
            database = discovered
        }
        let cached = try await exploreOnce(connector, manager, remembered: database, readValues: false).explore

        var bumble: [BumbleExplore] = []
        for _ in 0..<runs { bumble.append(try bumbleExplore(radio)) }

        let mine = ours.sorted { $0.seconds < $1.seconds }[ours.count / 2]
        let theirs = bumble.sorted { $0.seconds < $1.seconds }[bumble.count / 2]
        print("database           \(mine.services) services, \(mine.characteristics) characteristics, \(mine.descriptors) descriptors, \(mine.valueBytes) value bytes read")
        print("BareBLE            \(padded(String(mine.requests.total), 5)) ATT requests, \(fixed(mine.seconds * 1000, 1)) ms: \(mine.requests.breakdown)")
        print("Bumble             \(padded(String(theirs.requests), 5)) ATT requests, \(fixed(theirs.seconds * 1000, 1)) ms: \(theirs.byProcedure)")
        print("ratio              \(fixed(Double(theirs.requests) / Double(mine.requests.total), 2)) x fewer requests, \(fixed(theirs.seconds / mine.seconds, 2)) x faster than Bumble (both through the same Python peer)")
        print("cached reconnect   \(padded(String(cached.requests.total), 5)) ATT requests, \(fixed(cached.seconds * 1000, 1)) ms: \(cached.requests.breakdown)  (Database Hash unchanged)")
        // Bumble's explorer tallies characteristics and descriptors its own way (they differ
        // from ours on this peer); the value bytes both read are the comparison that holds.
        guard mine.valueBytes == theirs.valueBytes else {
            throw BenchError("BareBLE read \(mine.valueBytes) value bytes and Bumble \(theirs.valueBytes): they did not explore the same database")
        }
    }

    struct Explore: CustomStringConvertible {
        var services = 0, characteristics = 0, descriptors = 0, valueBytes = 0
        var requests = RequestCounts([])
        var seconds = 0.0
        var description: String { "\(services)/\(characteristics)/\(descriptors)/\(valueBytes) bytes" }
    }

    /// Connects, exchanges the MTU (not counted), then, timed and counted: discovery (with
    /// `remembered`, the cached path) and, unless told not to, a read of every readable
    /// characteristic and of every descriptor, like Bumble's explorer.
    private func exploreOnce(
        _ connector: Connector, _ manager: ChannelManager, remembered: GATTDatabase?, readValues: Bool = true
    ) async throws -> (explore: Explore, database: GATTDatabase) {
        let connection = try await connector.connect(to: Self.peer, timeout: .seconds(10))
        let bearer = CountingBearer(L2CAPBearer(manager: manager, connection: connection.handle))
        let att = ATTClient(bearer: bearer)
        _ = try await att.exchangeMTU(clientRxMTU: mtu)
        _ = bearer.takeCounts()
        let gatt = GATTClient(att: att)
        let start = ContinuousClock.now
        let database = try await gatt.discover(remembered: remembered)
        var explore = Explore(services: database.services.count)
        for characteristic in database.services.flatMap(\.characteristics) {
            explore.characteristics += 1
            explore.descriptors += characteristic.descriptors.count
            guard readValues else { continue }
            var handles = characteristic.descriptors.map(\.handle)
            if characteristic.properties.contains(.read) { handles.insert(characteristic.valueHandle, at: 0) }
            for handle in handles {
                explore.valueBytes += try await gatt.readValue(handle).count
            }
        }
        explore.seconds = nanoseconds(ContinuousClock.now - start) / 1e9
        explore.requests = bearer.takeCounts()
        att.close()
        try await connection.disconnect()
        return (explore, database)
    }

    struct BumbleExplore {
        var requests: Int, byProcedure: String, seconds: Double, valueBytes: Int
    }

    /// The radio's `bumble-explore` control: Bumble's own client on another controller of the
    /// same LocalLink explores the same peer and reports what it counted.
    private func bumbleExplore(_ radio: VirtualRadio) throws -> BumbleExplore {
        try radio.send(controlLine: "bumble-explore big-peripheral \(mtu)")
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let line = try radio.nextLine(timeout: .seconds(60))
            guard line.contains("\"event\": \"bumble-explore\"") else { continue }
            func number(_ key: String) throws -> Double {
                guard let range = line.firstRange(of: "\"\(key)\": ") else { throw BenchError("no \(key) in \(line)") }
                let text = line[range.upperBound...].prefix { $0 != "," && $0 != "}" }
                guard let value = Double(text) else { throw BenchError("bad \(key) in \(line)") }
                return value
            }
            return BumbleExplore(
                requests: Int(try number("att_requests")),
                byProcedure: try ["services", "includes", "characteristics", "descriptors", "reads", "other"].map { "\($0) \(Int(try number($0)))" }.joined(separator: ", "), seconds: try number("seconds"),
                valueBytes: Int(try number("value_bytes")))
        }
        throw BenchError("the radio did not report Bumble's explore within 60 s")
    }
}
