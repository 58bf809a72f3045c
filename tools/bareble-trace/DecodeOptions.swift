import ArgumentParser
import BluetoothCore
import Glibc
import HCITransport
import ToolSupport
import Trace

/// What `read` and `live` share: the output form, the filters, `--write`.
struct DecodeOptions: ParsableArguments {
    @Flag(name: .long, help: "One JSON object per packet (the default when stdout is not a terminal).")
    var json = false

    @Flag(name: .long, help: "Text even into a pipe.")
    var text = false

    @Flag(name: .shortAndLong, help: "Each packet's fields: under its line, or a \"fields\" member in JSON.")
    var verbose = false

    @Flag(name: .long, help: "Show SMP key material (redacted by default).")
    var showKeys = false

    @Option(name: .long, help: "Only this adapter index.")
    var index: UInt16?

    @Option(name: .long, help: "Only this connection handle.")
    var connection: UInt16?

    @Option(name: .long, help: "Only packets of this layer: hci, l2cap, att, smp or adv (repeatable).")
    var `protocol`: [String] = []

    @Option(name: .long, help: "Only packets about this device: its advertising reports and connections, also under private addresses that resolve with --irk, a bond's IRK or one exchanged in the trace.")
    var address: String?

    @OptionGroup var keys: AddressKeyOptions

    @Option(name: .long, help: "Also record what is read to this btsnoop file (Linux monitor format, 2001).")
    var write: String?

    func validate() throws {
        if json && text { throw ValidationError("--json and --text exclude each other") }
        for name in `protocol` where TracePacket.Layer(rawValue: name) == nil {
            throw ValidationError("--protocol \(name): use hci, l2cap, att, smp or adv")
        }
        if let address, BluetoothAddress(address) == nil { throw ValidationError("--address \(address) is not an address like C4:4B:4D:00:00:01") }
    }
}

/// Decodes records, filters and prints them through one output buffer, and records them
/// with `--write`. Not thread-safe: one reader feeds it.
final class TracePrinter {
    private var decoder: TraceDecoder
    private let options: DecodeOptions
    private let asJSON: Bool
    private let color: Bool
    private let layers: TracePacket.Layers
    /// The filters, read once: a property wrapper's getter per packet showed in profiles.
    private let index: UInt16?
    private let connection: UInt16?
    private var address: AddressFilter?
    private let capture: BTSnoopWriter?
    private var buffer = JSONWriter()
    private var clock = WallClock.ISO8601Formatter()
    private(set) var printed = 0
    private(set) var decoded = 0

    init(_ options: DecodeOptions) throws {
        self.options = options
        decoder = TraceDecoder(showKeys: options.showKeys, withFields: options.verbose)
        let terminal = isatty(1) == 1
        asJSON = options.json || (!options.text && !terminal)
        color = terminal && !asJSON && getenv("NO_COLOR") == nil
        layers = options.protocol.compactMap(TracePacket.Layer.init(rawValue:)).reduce(into: []) { $0.insert(TracePacket.Layers($1)) }
        index = options.index
        connection = options.connection
        address = try options.address.flatMap(BluetoothAddress.init).map(options.keys.filter(for:))
        capture = try options.write.map { path throws(BTSnoopError) in try BTSnoopWriter(path: path, datalink: .linuxMonitor) }
    }

    func handle(_ record: CaptureRecord) throws {
        try capture?.write(BTSnoop.Record(
            flags: UInt32(record.index) << 16 | UInt32(record.opcode.rawValue),
            timestamp: record.timestamp &+ BTSnoop.epochOffset, data: record.payload, originalLength: UInt32(clamping: record.originalLength)))
        let packet = decoder.decode(record)
        decoded += 1
        guard selected(packet) else { return }
        printed += 1
        if asJSON {
            TraceOutput.json(packet, into: &buffer, clock: &clock)
            buffer.newline()
        } else {
            buffer.bytes += Array(TraceOutput.text(packet, verbose: options.verbose, color: color).utf8)
            buffer.bytes.append(UInt8(ascii: "\n"))
        }
        if buffer.bytes.count >= 1 << 16 { flush() }
    }

    private func selected(_ packet: TracePacket) -> Bool {
        // First, so it learns from every packet (a key exchange filtered out by --protocol).
        if address?.matches(packet) == false { return false }
        if let index, packet.index != index { return false }
        if let connection, packet.connection != connection { return false }
        if !layers.isEmpty, layers.isDisjoint(with: packet.layers) || (layers == [.hci] && packet.layers != [.hci]) { return false }
        return true
    }

    func flush() {
        guard !buffer.bytes.isEmpty else { return }
        writeOut(buffer.bytes)
        buffer.bytes.removeAll(keepingCapacity: true)
    }

    func close() {
        flush()
        capture?.close()
        let lost = [
            (decoder.forgottenConnections, "connections forgotten (more than \(TraceDecoder.maximumConnections) at once)"),
            (decoder.forgottenSides, "connection sides' reassembly or pending state forgotten"),
            (decoder.unjoinedRequests, "ATT requests or indications left unjoined (more than \(TraceDecoder.maximumOutstanding) outstanding)"),
            (address?.forgottenKeys ?? 0, "IRKs learnt from the trace forgotten (more than \(AddressFilter.maximumKeys))"),
        ].filter { $0.0 > 0 }
        // The decoder's bounds only bite on damaged or hostile captures: say so, never silently.
        if !lost.isEmpty {
            printError("bareble-trace: " + lost.map { "\($0.0) \($0.1)" }.joined(separator: "; "))
        }
    }
}
