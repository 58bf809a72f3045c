import ArgumentParser
import BareBLE
import BluetoothCore
import GATT
import ToolSupport

/// `bareble-central explore ADDR`: the LightBlue view of a device. Every service, each
/// characteristic with its properties and value (hex and decoded), every descriptor with
/// its value.
struct Explore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect, discover the whole GATT database, read every readable value and descriptor, print the tree.",
        discussion: """
            Characteristics without the read property are listed without a value. A read the \
            peer refuses (e.g. one that needs an encrypted link) is shown as an error and the \
            exploration goes on. --json prints one object for programs.
            """
    )

    @OptionGroup var device: PeripheralOptions

    @Flag(help: "Print one JSON object instead of the tree.")
    var json = false

    func run() async throws {
        let output = try await device.connect { _, peripheral in
            do throws(PeripheralError) {
                try await peripheral.discoverServices()
            } catch {
                throw ToolError(userMessage(error, doing: "discovering the services"))
            }
            var readings: [UInt16: ValueReading] = [:]
            for service in peripheral.services {
                for characteristic in service.characteristics {
                    // Descriptors first: a Presentation Format read decides how the value decodes.
                    for descriptor in characteristic.descriptors {
                        readings[descriptor.handle] = try await peripheral.reading(descriptor)
                    }
                    if characteristic.properties.contains(.read) {
                        readings[characteristic.valueHandle] = try await peripheral.reading(characteristic)
                    }
                }
            }
            let explored = ExploredDatabase(
                peer: peripheral.identifier, mtu: peripheral.mtu,
                database: GATTDatabase(services: peripheral.services.map(\.declaration), databaseHash: peripheral.database?.databaseHash),
                readings: readings)
            return json ? explored.json.text : Self.tree(peripheral, readings)
        }
        writeOut(output + "\n")
    }

    static func tree(_ peripheral: Peripheral, _ readings: [UInt16: ValueReading]) -> String {
        var lines = ["\(peripheral.name.map { "\(TerminalText.printable($0)) " } ?? "")\(peripheral.identifier), ATT MTU \(peripheral.mtu), \(peripheral.services.count) services"]
        for service in peripheral.services {
            let range = "\(handleText(service.handles.lowerBound))-\(handleText(service.handles.upperBound))"
            lines.append("\(service.isPrimary ? "" : "secondary ")service \(label(service.uuid, service.name))  [\(range)]")
            for include in service.includedServices {
                lines.append("  includes \(label(include.uuid, include.name))  [\(handleText(include.handles.lowerBound))-\(handleText(include.handles.upperBound))]")
            }
            for characteristic in service.characteristics {
                lines.append("  characteristic \(label(characteristic.uuid, characteristic.name))  [\(handleText(characteristic.valueHandle))] \(characteristic.properties.names.joined(separator: " "))")
                if let reading = readings[characteristic.valueHandle] { lines.append("    value  \(reading.text)") }
                for descriptor in characteristic.descriptors {
                    lines.append("    descriptor \(label(descriptor.uuid, descriptor.name))  [\(handleText(descriptor.handle))]  \((readings[descriptor.handle] ?? ValueReading()).text)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// "180D Heart Rate", or the UUID alone when it has no name.
    static func label(_ uuid: BluetoothUUID, _ name: String?) -> String {
        name.map { "\(uuid) \($0)" } ?? uuid.description
    }
}
