import ArgumentParser
import BluetoothCore
import Glibc
import HCI
import HCITransport
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

    @Option(help: "Lowest latency: after each packet the reader keeps reading without sleeping for this many microseconds (try 1000). Costs a busy core while advertisements flow; see the README's Speed section.")
    var spin: Int?

    func validate() throws {
        for service in services where BluetoothUUID(service) == nil {
            throw ValidationError("--service \(service) is not a UUID: use 180D, 0000180D or the 128-bit form")
        }
        for address in addresses where DeviceAddress(address) == nil {
            throw ValidationError("--address \(address) is not an address: use AA:BB:CC:DD:EE:FF, optionally /public or /random")
        }
        if let rssiMin, !(-127...20).contains(rssiMin) { throw ValidationError("--rssi-min \(rssiMin) is outside -127...20 dBm") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be more than 0 seconds") }
        if let spin, !(1...1_000_000).contains(spin) { throw ValidationError("--spin \(spin) is outside 1...1000000 microseconds") }
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
            readerWait: spin.map { .spinning(window: .microseconds($0)) } ?? .blocking,
            duration: duration,
            // Redraws "last seen" while nothing arrives; draws are capped at 10/s anyway.
            tickEvery: live ? .milliseconds(100) : nil,
            handle: { output.handle($0) },
            stopped: { output.finish() }
        )
    }
}

/// The two renderings: JSON lines, or a table redrawn in place.
///
/// JSON lines are encoded straight into one byte buffer and written with one write() per
/// batch of advertisements (or per `flushThreshold` bytes), so a pipe gets whole lines,
/// as soon as the input goes quiet, at a fraction of a system call per line. Advertisements
/// the scan dropped because this output was behind are reported where the gap is, as a
/// `{"event":"dropped",...}` line, and counted in the table's header.
/// The live table's devices, bounded whatever the air carries: past ``maximumRows`` the
/// devices heard longest ago are forgotten (a quarter at a time, so a flood of new random
/// addresses costs a sort per 256 of them, not a search per advertisement) and counted.
struct ScanTable {
    struct Row {
        var latest: Advertisement
        var name: String?
        var count: Int
    }

    static let maximumRows = 1024
    private(set) var rows: [DeviceAddress: Row] = [:]
    /// Devices forgotten to keep the table within ``maximumRows``.
    private(set) var forgotten = 0

    mutating func add(_ advertisement: Advertisement) {
        var row = rows[advertisement.address] ?? Row(latest: advertisement, name: nil, count: 0)
        row.latest = advertisement
        row.name = advertisement.localName ?? row.name
        row.count += 1
        rows[advertisement.address] = row
        if rows.count > Self.maximumRows { forgetOldest() }
    }

    /// Down to three quarters of the bound, the devices heard longest ago first.
    private mutating func forgetOldest() {
        let excess = rows.count - Self.maximumRows * 3 / 4
        for (address, _) in rows.sorted(by: { $0.value.latest.timestamp < $1.value.latest.timestamp }).prefix(excess) {
            rows[address] = nil
        }
        forgotten += excess
    }
}

struct ScanOutput {
    /// Past this many bytes the buffer is written even inside a batch: bounds its memory.
    static let flushThreshold = 256 * 1024
    /// Rows drawn: the rest of the table is summed up in one line.
    static let drawnRows = 100

    let live: Bool
    let sort: Scan.SortKey
    var table = ScanTable()
    var lastDraw: UInt64 = 0
    var dirty = false
    var out = JSONWriter()
    /// Wall clock minus monotonic clock, read once per batch for the lines' `time`.
    var wallClockOffset = WallClock.offsetFromMonotonic()
    var timeFormatter = WallClock.ISO8601Formatter()
    /// Dropped advertisements already reported.
    var dropped = 0

    init(live: Bool, sort: Scan.SortKey) {
        self.live = live
        self.sort = sort
        out.bytes.reserveCapacity(Self.flushThreshold + 4096)
    }

    mutating func handle(_ event: ScanRunEvent) {
        switch event {
        case let .advertisement(advertisement):
            if live {
                table.add(advertisement)
                dirty = true
            } else {
                Self.writeJSON(advertisement, wallClockOffset: wallClockOffset, time: &timeFormatter, to: &out)
                if out.bytes.count >= Self.flushThreshold { flush() }
            }
        case let .caughtUp(total):
            if total > dropped {
                if !live { Self.writeDropped(total - dropped, total: total, to: &out) }
                dropped = total
                dirty = true
            }
            flush()
            wallClockOffset = WallClock.offsetFromMonotonic()
        case .tick:
            dirty = dirty || !table.rows.isEmpty
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

    mutating func flush() {
        guard !out.bytes.isEmpty else { return }
        writeOut(out.bytes)
        out.bytes.removeAll(keepingCapacity: true)
    }

    mutating func finish() {
        if live { draw(now: MonotonicClock.nanoseconds()) }
        flush()
    }

    func draw(now: UInt64) {
        let sorted = table.rows.values.sorted { a, b in
            switch sort {
            case .rssi: (a.latest.rssi ?? -128, a.latest.address.description) > (b.latest.rssi ?? -128, b.latest.address.description)
            case .address: a.latest.address.description < b.latest.address.description
            case .name: (a.name ?? "\u{10FFFF}", a.latest.address.description) < (b.name ?? "\u{10FFFF}", b.latest.address.description)
            case .lastSeen: a.latest.timestamp > b.latest.timestamp
            }
        }
        var screen = "\u{1B}[H\u{1B}[2J"
        let forgottenText = table.forgotten > 0 ? " (\(table.forgotten) more forgotten, heard longest ago)" : ""
        screen += "\(table.rows.count) devices\(forgottenText), \(dropped) advertisements dropped (display behind), sorted by \(sort.rawValue); Ctrl-C stops\n"
        let header = ["ADDRESS", "NAME", "RSSI", "CONN", "SERVICES", "MANUFACTURER", "LAST SEEN", "COUNT"]
        var table = [header]
        for row in sorted.prefix(Self.drawnRows) {
            let ad = row.latest
            let age = now >= ad.timestamp ? Double(now - ad.timestamp) / 1e9 : 0
            table.append([
                ad.address.description, row.name.map(TerminalText.printable) ?? "-", ad.rssi.map { String($0) } ?? "-", ad.isConnectable ? "yes" : "no",
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
        if sorted.count > Self.drawnRows { screen += "... and \(sorted.count - Self.drawnRows) more\n" }
        writeOut(screen)
    }

    /// One advertisement as a JSON line. `timestamp` is the monotonic reception time in
    /// nanoseconds; `time` the same moment on the wall clock, UTC.
    static func writeJSON(_ ad: Advertisement, wallClockOffset: Int64, time: inout WallClock.ISO8601Formatter, to out: inout JSONWriter) {
        out.beginObject()
        out.member("address")
        out.asciiString { bytes in
            let value = ad.address.address.value
            for shift in stride(from: 40, through: 0, by: -8) {
                if shift < 40 { bytes.append(UInt8(ascii: ":")) }
                Hex.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)), to: &bytes)
            }
        }
        out.member("addressType")
        out.string(ad.address.type.description)
        out.member("eventType")
        out.asciiString { ad.eventType.appendDescription(to: &$0) }
        out.member("connectable")
        out.bool(ad.isConnectable)
        out.member("rssi")
        if let rssi = ad.rssi { out.int(Int(rssi)) } else { out.null() }
        out.member("txPower")
        if let txPower = ad.txPower { out.int(Int(txPower)) } else { out.null() }
        out.member("name")
        if let name = ad.localName { out.string(name) } else { out.null() }
        out.member("services")
        out.beginArray()
        for uuid in ad.serviceUUIDs { out.asciiString { uuid.appendDescription(to: &$0) } }
        out.endArray()
        if let manufacturer = manufacturerData(ad) {
            out.member("manufacturer")
            out.beginObject()
            out.member("company")
            out.int(Int(manufacturer.companyID))
            out.member("data")
            out.hex(manufacturer.data)
            out.endObject()
        }
        out.member("data")
        out.hex(ad.advertisingData.bytes)
        out.member("scanResponse")
        if let response = ad.scanResponseData { out.hex(response.bytes) } else { out.null() }
        out.member("primaryPHY")
        out.string(ad.primaryPHY.description)
        out.member("secondaryPHY")
        if let phy = ad.secondaryPHY { out.string(phy.description) } else { out.null() }
        out.member("sid")
        if let sid = ad.advertisingSID { out.int(Int(sid)) } else { out.null() }
        out.member("truncated")
        out.bool(ad.isTruncated)
        out.member("timestamp")
        out.int(Int(truncatingIfNeeded: ad.timestamp))
        out.member("time")
        out.asciiString { time.append(Int64(bitPattern: ad.timestamp) &+ wallClockOffset, to: &$0) }
        if let direct = ad.directAddress {
            out.member("directAddress")
            out.string(direct.description)
        }
        out.endObject()
        out.newline()
    }

    /// `count` advertisements were lost here (the output was behind); `total` so far.
    static func writeDropped(_ count: Int, total: Int, to out: inout JSONWriter) {
        out.beginObject()
        out.member("event")
        out.string("dropped")
        out.member("count")
        out.int(count)
        out.member("total")
        out.int(total)
        out.member("time")
        out.asciiString { WallClock.appendISO8601(Int64(bitPattern: MonotonicClock.nanoseconds()) &+ WallClock.offsetFromMonotonic(), to: &$0) }
        out.endObject()
        out.newline()
    }
}

/// The first Manufacturer Specific Data in the advertising data or the scan response.
func manufacturerData(_ ad: Advertisement) -> ManufacturerData? {
    ad.advertisingData.firstManufacturerData ?? ad.scanResponseData?.firstManufacturerData
}

func manufacturerText(_ ad: Advertisement) -> String? {
    guard let manufacturer = manufacturerData(ad) else { return nil }
    let company = manufacturer.companyID
    return (manufacturer.companyName ?? "0x" + Hex.string([UInt8(company >> 8), UInt8(company & 0xFF)])) + " " + Hex.string(manufacturer.data)
}
