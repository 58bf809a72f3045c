import ArgumentParser
import BluetoothCore
import Dispatch
import Glibc
import HCI
import ToolSupport

/// `bareble-central advertise`: put a name, services, manufacturer data or raw AD bytes on
/// the air until Ctrl-C or --duration.
struct Advertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Advertise a name, service UUIDs, manufacturer data or raw AD bytes until Ctrl-C or --duration.",
        discussion: """
            Connectable by default when --name or --service is given, non-connectable otherwise \
            (raw and manufacturer payloads are usually beacons); --connectable and \
            --non-connectable override. A non-connectable advertisement with a scan response is \
            sent as scannable. Legacy PDUs (31 bytes, heard by every scanner) are used when the \
            data fits and nothing else is asked for; --extended forces extended PDUs.
            """
    )

    enum Connectability: EnumerableFlag {
        case connectable
        case nonConnectable

        static func help(for value: Connectability) -> ArgumentHelp? {
            switch value {
            case .connectable: "Accept connections (ADV_IND; scannable too with legacy PDUs)."
            case .nonConnectable: "A broadcast: no connections (ADV_NONCONN_IND, or ADV_SCAN_IND with a scan response)."
            }
        }
    }

    @OptionGroup var options: TransportOptions

    @Option(help: "The complete local name to advertise.")
    var name: String?

    @Option(name: .customLong("service"), help: "A service UUID to advertise (16-, 32- or 128-bit); repeatable.")
    var services: [String] = []

    @Option(name: .customLong("manufacturer"), help: "Manufacturer specific data COMPANY:HEX, company as 0x004C or 76; repeatable.")
    var manufacturers: [String] = []

    @Option(help: "Raw advertising data (AD structures) in hex; replaces the data built from the other options.")
    var raw: String?

    @Option(name: .customLong("scan-response-raw"), help: "Raw scan response data in hex.")
    var scanResponseRaw: String?

    @Flag(help: "Connectability; see the discussion for the default.")
    var connectability: Connectability?

    @Option(help: "Advertising interval in milliseconds (legacy: 20 ... 10240).")
    var interval: Double = 100

    @Option(name: .customLong("tx-power"), help: "Requested TX power in dBm (extended advertising controllers only).")
    var txPower: Int8?

    @Flag(help: "Use extended advertising PDUs (Bluetooth 5 scanners only; up to the controller's maximum data length).")
    var extended = false

    @Flag(help: "Advertise from a fresh random static address instead of the controller's public address.")
    var random = false

    @Option(help: "Stop after this many seconds instead of waiting for Ctrl-C.")
    var duration: Double?

    func run() async throws {
        let data = try advertisingData()
        let scanResponse = try scanResponseRaw.map { AdvertisingData(try Self.hex($0, option: "--scan-response-raw")) }
        let connectable = switch connectability {
        case .connectable?: true
        case .nonConnectable?: false
        case nil: name != nil || !services.isEmpty
        }
        guard interval.isFinite, interval >= 0, interval < 1e9 else { throw ToolError("--interval \(interval) is not a number of milliseconds") }
        if let duration, !(duration.isFinite && duration > 0 && duration < 1e7) {
            throw ToolError("--duration \(duration) is not a positive number of seconds")
        }
        let parameters = AdvertisingParameters(
            kind: connectable ? .connectableUndirected : scanResponse == nil ? .nonConnectableUndirected : .scannableUndirected,
            interval: .microseconds(Int64((interval * 1000).rounded())),
            pduFormat: extended ? .extended : .automatic,
            ownAddress: random ? .randomStatic : .public,
            txPower: txPower
        )

        let controller = try await options.openPoweredController()
        defer { controller.close() }
        let advertiser = Advertiser(controller: controller)
        let set: AdvertisingSet
        do {
            set = try await advertiser.start(parameters, data: data, scanResponse: scanResponse)
        } catch {
            throw ToolError(error.description)
        }
        print(Self.summary(set, data: data, scanResponse: scanResponse, duration: duration))
        fflush(nil)

        await StopRequest.wait(upTo: duration)
        do {
            try await set.stop()
        } catch {
            throw ToolError("could not stop advertising: \(error)")
        }
    }

    /// "advertising as F0:0D:00:00:00:01 (public), connectable, legacy PDUs, interval 100 ms,
    /// data 02010604094142 ..., until Ctrl-C"
    static func summary(_ set: AdvertisingSet, data: AdvertisingData, scanResponse: AdvertisingData?, duration: Double?) -> String {
        var parts = [
            "advertising as \(set.address.address) (\(set.address.kind))",
            set.parameters.kind.description,
            set.usesLegacyPDUs ? "legacy PDUs" : "extended PDUs",
            "interval \(milliseconds(set.interval)) ms",
        ]
        if let power = set.selectedTxPower { parts.append("TX power \(power) dBm") }
        parts.append("data \(data.bytes.isEmpty ? "(none)" : Hex.string(data.bytes))")
        if let scanResponse { parts.append("scan response \(scanResponse.bytes.isEmpty ? "(empty)" : Hex.string(scanResponse.bytes))") }
        parts.append(duration.map { "for \($0) s" } ?? "until Ctrl-C")
        return parts.joined(separator: ", ")
    }

    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        return microseconds % 1000 == 0 ? String(microseconds / 1000) : String(Double(microseconds) / 1000)
    }

    /// --raw as given, else the data the other options describe (flags first: LE General
    /// Discoverable, BR/EDR Not Supported).
    func advertisingData() throws -> AdvertisingData {
        if let raw { return AdvertisingData(try Self.hex(raw, option: "--raw")) }
        var builder = AdvertisingDataBuilder()
        builder.flags(.generalDiscoverableLEOnly)
        var uuids: [BluetoothUUID] = []
        for text in services {
            guard let uuid = BluetoothUUID(text) else { throw ToolError("--service \(text) is not a UUID: give 180D, 0000180D or the dashed 128-bit form") }
            uuids.append(uuid)
        }
        if !uuids.isEmpty { builder.serviceUUIDs(uuids) }
        for text in manufacturers {
            let pieces = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard pieces.count == 2, let company = Self.company(pieces[0]), let data = Hex.bytes(pieces[1]) else {
                throw ToolError("--manufacturer \(text) is not COMPANY:HEX: give for example 0x004C:0215 or 76:0215")
            }
            builder.manufacturerData(companyID: company, data)
        }
        if let name { builder.localName(name) }
        do {
            return try builder.build(limit: extended ? AdvertisingDataBuilder.extendedLimit : AdvertisingDataBuilder.legacyLimit)
        } catch {
            throw ToolError("\(error)" + (extended ? "" : ": shorten it, or use --extended"))
        }
    }

    static func company(_ text: String) -> UInt16? {
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt16(text.dropFirst(2), radix: 16) }
        return UInt16(text)
    }

    static func hex(_ text: String, option: String) throws -> [UInt8] {
        guard let bytes = Hex.bytes(text) else { throw ToolError("\(option) \(text) is not hex: give pairs of hex digits such as 020106") }
        return bytes
    }
}

