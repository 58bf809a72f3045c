import ArgumentParser
import BluetoothCore
import HCI
import ToolSupport

/// `bareble-central info`: bring the controller up and say what it is.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the controller up and print what it is: address, versions, manufacturer, LE features, buffers, LE commands."
    )

    @OptionGroup var options: TransportOptions

    @Flag(help: "One JSON object instead of the human table.")
    var json = false

    func run() async throws {
        let controller = try options.openController()
        defer { controller.close() }
        let info: ControllerInfo
        do {
            info = try await controller.powerOn()
        } catch {
            throw ToolError(error.description)
        }
        let report = InfoReport(info: info, transport: controller.transport.name)
        print(json ? report.json.text : report.table)
    }
}

/// What `info` prints, built once and rendered as a table or as JSON.
struct InfoReport {
    let info: ControllerInfo
    let transport: String

    var manufacturer: String {
        let id = info.version.manufacturer
        return "\(CompanyIdentifiers.name(for: id) ?? "unassigned") (0x\(Hex.string([UInt8(id >> 8), UInt8(id & 0xFF)])))"
    }

    /// Commands an LE host may use: LE commands plus the link control and status commands
    /// that act on LE links, in opcode order.
    var leCommands: [(name: String, supported: Bool)] {
        HCICommands.all
            .filter { $0.opcode.ogf == HCIOpcode.Group.le || $0 == Disconnect.self || $0 == ReadRemoteVersionInformation.self || $0 == ReadRSSI.self }
            .sorted { $0.opcode < $1.opcode }
            .map { ($0.name, info.supportedCommands.supports($0)) }
    }

    var table: String {
        let version = info.version
        var rows: [(String, String)] = [
            ("Transport", transport),
            ("Address", "\(info.address) (public)"),
            ("HCI version", "\(HCIVersion(version.hciVersion)), revision 0x\(hex16(version.hciSubversion))"),
            ("LMP version", "\(LMPVersion(version.lmpVersion)), subversion 0x\(hex16(version.lmpSubversion))"),
            ("Manufacturer", manufacturer),
            ("ACL buffers", buffer(info.aclBuffer)),
            ("ISO buffers", buffer(info.isoBuffer)),
        ]
        if let length = info.maximumDataLength {
            rows.append(("Max data length", "TX \(length.supportedMaxTxOctets) octets / \(length.supportedMaxTxTime) µs, RX \(length.supportedMaxRxOctets) octets / \(length.supportedMaxRxTime) µs"))
        }
        if let sets = info.numberOfAdvertisingSets {
            rows.append(("Advertising sets", String(sets)))
        }
        if let length = info.maximumAdvertisingDataLength {
            rows.append(("Max adv. data", "\(length) bytes"))
        }
        if let size = info.filterAcceptListSize { rows.append(("Accept list", "\(size) entries")) }
        if let size = info.resolvingListSize { rows.append(("Resolving list", "\(size) entries")) }
        let width = rows.map(\.0.count).max() ?? 0
        var out = rows.map { $0.0.padding(to: width) + "  " + $0.1 }
        out.append("LE features".padding(to: width) + "  " + (info.leFeatures.names.first ?? "none"))
        for name in info.leFeatures.names.dropFirst() { out.append(String(repeating: " ", count: width + 2) + name) }
        let commands = leCommands
        out.append("")
        out.append("LE commands (\(commands.filter(\.supported).count) of \(commands.count) that BareBLE knows are supported):")
        let nameWidth = commands.map(\.name.count).max() ?? 0
        for command in commands {
            out.append("  " + command.name.padding(to: nameWidth) + "  " + (command.supported ? "yes" : "-"))
        }
        return out.joined(separator: "\n")
    }

    var json: JSONValue {
        let version = info.version
        var members: [(String, JSONValue)] = [
            ("transport", .string(transport)),
            ("address", .string(info.address.description)),
            ("hciVersion", .object([("value", .int(Int(version.hciVersion))), ("name", .string(HCIVersion(version.hciVersion).description)), ("revision", .int(Int(version.hciSubversion)))])),
            ("lmpVersion", .object([("value", .int(Int(version.lmpVersion))), ("name", .string(LMPVersion(version.lmpVersion).description)), ("subversion", .int(Int(version.lmpSubversion)))])),
            ("manufacturer", .object([("id", .int(Int(version.manufacturer))), ("name", CompanyIdentifiers.name(for: version.manufacturer).map(JSONValue.string) ?? .null)])),
            ("leFeatures", .array(info.leFeatures.names.map(JSONValue.string))),
            ("aclBuffer", bufferJSON(info.aclBuffer)),
            ("isoBuffer", bufferJSON(info.isoBuffer)),
        ]
        if let length = info.maximumDataLength {
            members.append(("maximumDataLength", .object([
                ("txOctets", .int(Int(length.supportedMaxTxOctets))), ("txTime", .int(Int(length.supportedMaxTxTime))),
                ("rxOctets", .int(Int(length.supportedMaxRxOctets))), ("rxTime", .int(Int(length.supportedMaxRxTime))),
            ])))
        }
        members.append(("advertisingSets", info.numberOfAdvertisingSets.map { .int(Int($0)) } ?? .null))
        members.append(("maximumAdvertisingDataLength", info.maximumAdvertisingDataLength.map { .int(Int($0)) } ?? .null))
        members.append(("filterAcceptListSize", info.filterAcceptListSize.map { .int(Int($0)) } ?? .null))
        members.append(("resolvingListSize", info.resolvingListSize.map { .int(Int($0)) } ?? .null))
        members.append(("leCommands", .object(leCommands.map { ($0.name, .bool($0.supported)) })))
        return .object(members)
    }

    private func buffer(_ size: ControllerInfo.BufferSize) -> String {
        size.packetCount == 0 ? "none" : "\(size.packetLength) bytes x \(size.packetCount) (\(size.source))"
    }

    private func bufferJSON(_ size: ControllerInfo.BufferSize) -> JSONValue {
        .object([("packetLength", .int(size.packetLength)), ("packetCount", .int(size.packetCount)), ("source", .string(size.source))])
    }

    private func hex16(_ value: UInt16) -> String { Hex.string([UInt8(value >> 8), UInt8(value & 0xFF)]) }
}
