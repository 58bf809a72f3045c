import ArgumentParser
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// `bareble-central scan`: watch advertisements, as a live table on a terminal or as JSON
/// lines for pipes. Ctrl-C stops cleanly: scanning is disabled on the controller, the
/// transport closed and the output flushed before exiting with status 0.
struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for advertisements: a live table on a terminal, one JSON object per advertisement otherwise.",
        discussion: "Stop with Ctrl-C or --duration. Filters apply on the host: --service (any of), --name, --rssi-min, --address."
    )

    enum Mode: String, EnumerableFlag {
        case passive, active
        static func help(for value: Mode) -> ArgumentHelp? {
            value == .active ? "Send scan requests; scan responses are merged into the advertisements." : "Only listen (the default)."
        }
    }

    enum Duplicates: String, ExpressibleByArgument, CaseIterable {
        case all, first, changes
        var policy: DuplicatePolicy {
            switch self {
            case .all: .all
            case .first: .firstPerDevice
            case .changes: .whenDataChanges
            }
        }
    }

    enum SortKey: String, ExpressibleByArgument, CaseIterable {
        case rssi, address, name
        case lastSeen = "last-seen"
    }

    @OptionGroup var options: TransportOptions

    @Flag(help: "One JSON object per advertisement per line (the default when stdout is not a terminal).")
    var json = false

    @Flag var mode: Mode = .passive

    @Option(name: .customLong("service"), help: "Only devices advertising this service UUID (repeatable: any of them).")
    var services: [String] = []

    @Option(help: "Only devices whose local name starts with this.")
    var name: String?

    @Option(name: .customLong("rssi-min"), help: "Only reports at least this strong (dBm).")
    var rssiMin: Int?

    @Option(name: .customLong("address"), help: "Only this device, AA:BB:CC:DD:EE:FF[/public|/random] (repeatable).")
    var addresses: [String] = []

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Option(help: "Which repeats to show: all, first (per device) or changes (when the data changes).")
    var duplicates: Duplicates = .all

    @Option(help: "Table order: rssi, address, name or last-seen.")
    var sort: SortKey = .rssi

    @Flag(help: "Use the legacy scan commands even when the controller has extended ones.")
    var legacy = false

    func validate() throws {
        for service in services where BluetoothUUID(service) == nil {
            throw ValidationError("--service \(service) is not a UUID: use 180D, 0000180D or the 128-bit form")
        }
        for address in addresses where DeviceAddress(address) == nil {
            throw ValidationError("--address \(address) is not an address: use AA:BB:CC:DD:EE:FF, optionally /public or /random")
        }
        if let rssiMin, !(-127...20).contains(rssiMin) { throw ValidationError("--rssi-min \(rssiMin) is outside -127...20 dBm") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be more than 0 seconds") }
    }

    /// An address given without /public or /random matches either type: users rarely know
    /// which one a device uses.
    static func addressesToMatch(_ text: String) -> [DeviceAddress] {
        guard let address = DeviceAddress(text) else { return [] }
        if text.contains("/") { return [address] }
        return [DeviceAddress(address.address, type: .public), DeviceAddress(address.address, type: .random)]
    }

    func run() async throws {
        let filter = ScanFilter(
            services: services.compactMap(BluetoothUUID.init),
            namePrefix: name,
            minimumRSSI: rssiMin.map { Int8($0) },
            addresses: Set(addresses.flatMap(Self.addressesToMatch)),
            duplicates: duplicates.policy
        )
        let live = !json && isatty(1) == 1
        var output = ScanOutput(live: live, sort: sort)
        try await ScanRun.run(
            options: options, filter: filter, active: mode == .active, useExtendedCommands: legacy ? false : nil,
            duration: duration,
            // Redraws "last seen" while nothing arrives; draws are capped at 10/s anyway.
            tickEvery: live ? .milliseconds(100) : nil,
            handle: { output.handle($0) },
            stopped: { output.finish() }
        )
    }
}

/// The two renderings: JSON lines, or a table redrawn in place.
struct ScanOutput {
    struct Row {
        var latest: Advertisement
        var name: String?
        var count: Int
    }

    let live: Bool
    let sort: Scan.SortKey
    var rows: [DeviceAddress: Row] = [:]
    var lastDraw: UInt64 = 0
    var dirty = false

    init(live: Bool, sort: Scan.SortKey) {
        self.live = live
        self.sort = sort
    }

    mutating func handle(_ event: ScanRunEvent) {
        switch event {
        case let .advertisement(advertisement):
            if live {
                var row = rows[advertisement.address] ?? Row(latest: advertisement, name: nil, count: 0)
                row.latest = advertisement
                row.name = advertisement.localName ?? row.name
                row.count += 1
                rows[advertisement.address] = row
                dirty = true
            } else {
                writeOut(Self.json(advertisement).text + "\n")
            }
        case .tick:
            dirty = dirty || !rows.isEmpty
        }
        if live, dirty {
            let now = MonotonicClock.nanoseconds()
            if now &- lastDraw >= 100_000_000 {
                lastDraw = now
                dirty = false
                draw(now: now)
            }
        }
    }

    mutating func finish() {
        if live { draw(now: MonotonicClock.nanoseconds()) }
    }

    func draw(now: UInt64) {
        let sorted = rows.values.sorted { a, b in
            switch sort {
            case .rssi: (a.latest.rssi ?? -128, a.latest.address.description) > (b.latest.rssi ?? -128, b.latest.address.description)
            case .address: a.latest.address.description < b.latest.address.description
            case .name: (a.name ?? "\u{10FFFF}", a.latest.address.description) < (b.name ?? "\u{10FFFF}", b.latest.address.description)
            case .lastSeen: a.latest.timestamp > b.latest.timestamp
            }
        }
        var screen = "\u{1B}[H\u{1B}[2J"
        screen += "\(rows.count) devices, sorted by \(sort.rawValue); Ctrl-C stops\n"
        let header = ["ADDRESS", "NAME", "RSSI", "CONN", "SERVICES", "MANUFACTURER", "LAST SEEN", "COUNT"]
        var table = [header]
        for row in sorted {
            let ad = row.latest
            let age = now >= ad.timestamp ? Double(now - ad.timestamp) / 1e9 : 0
            table.append([
                ad.address.description, row.name ?? "-", ad.rssi.map { String($0) } ?? "-", ad.isConnectable ? "yes" : "no",
                ad.serviceUUIDs.map(\.description).joined(separator: ","),
                manufacturerText(ad) ?? "-",
                String(Int(age * 10) / 10) + "." + String(Int(age * 10) % 10) + "s ago",
                String(row.count),
            ])
        }
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        for line in table {
            screen += line.indices.map { line[$0].padding(to: widths[$0]) }.joined(separator: "  ") + "\n"
        }
        writeOut(screen)
    }

    static func json(_ ad: Advertisement) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("address", .string(ad.address.address.description)),
            ("addressType", .string(ad.address.type.description)),
            ("eventType", .string(ad.eventType.description)),
            ("connectable", .bool(ad.isConnectable)),
            ("rssi", ad.rssi.map { .int(Int($0)) } ?? .null),
            ("txPower", ad.txPower.map { .int(Int($0)) } ?? .null),
            ("name", ad.localName.map(JSONValue.string) ?? .null),
            ("services", .array(ad.serviceUUIDs.map { .string($0.description) })),
            ("data", .string(Hex.string(ad.advertisingData.bytes))),
            ("scanResponse", ad.scanResponseData.map { .string(Hex.string($0.bytes)) } ?? .null),
            ("primaryPHY", .string(ad.primaryPHY.description)),
            ("secondaryPHY", ad.secondaryPHY.map { .string($0.description) } ?? .null),
            ("sid", ad.advertisingSID.map { .int(Int($0)) } ?? .null),
            ("truncated", .bool(ad.isTruncated)),
            ("timestamp", .int(Int(truncatingIfNeeded: ad.timestamp))),
        ]
        if let manufacturer = manufacturerData(ad) {
            members.insert(("manufacturer", .object([
                ("company", .int(Int(manufacturer.companyID))),
                ("data", .string(Hex.string(manufacturer.data))),
            ])), at: 8)
        }
        if let direct = ad.directAddress { members.append(("directAddress", .string(direct.description))) }
        return .object(members)
    }
}

/// The first Manufacturer Specific Data in the advertising data or the scan response.
func manufacturerData(_ ad: Advertisement) -> ManufacturerData? {
    ad.advertisingData.manufacturerData.first ?? ad.scanResponseData?.manufacturerData.first
}

func manufacturerText(_ ad: Advertisement) -> String? {
    guard let manufacturer = manufacturerData(ad) else { return nil }
    let company = manufacturer.companyID
    return (manufacturer.companyName ?? "0x" + Hex.string([UInt8(company >> 8), UInt8(company & 0xFF)])) + " " + Hex.string(manufacturer.data)
}
