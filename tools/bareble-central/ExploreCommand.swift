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

    /// One characteristic with what was read.
    struct Row {
        var characteristic: Characteristic
        var reading: ValueReading?
        var descriptors: [(Descriptor, ValueReading)]
    }

    func run() async throws {
        let output = try await device.connect { _, peripheral in
            do throws(PeripheralError) {
                try await peripheral.discoverServices()
            } catch {
                throw ToolError(userMessage(error, doing: "discovering the services"))
            }
            var rows: [UInt16: Row] = [:]
            for service in peripheral.services {
                for characteristic in service.characteristics {
                    // Descriptors first: a Presentation Format read decides how the value decodes.
                    var descriptors: [(Descriptor, ValueReading)] = []
                    for descriptor in characteristic.descriptors {
                        descriptors.append((descriptor, try await peripheral.reading(descriptor)))
                    }
                    let reading = characteristic.properties.contains(.read) ? try await peripheral.reading(characteristic) : nil
                    rows[characteristic.valueHandle] = Row(characteristic: characteristic, reading: reading, descriptors: descriptors)
                }
            }
            return json ? Self.json(peripheral, rows).text : Self.tree(peripheral, rows)
        }
        writeOut(output + "\n")
    }

    static func tree(_ peripheral: Peripheral, _ rows: [UInt16: Row]) -> String {
        var lines = ["\(peripheral.name.map { "\($0) " } ?? "")\(peripheral.identifier), ATT MTU \(peripheral.mtu), \(peripheral.services.count) services"]
        for service in peripheral.services {
            let range = "\(handleText(service.handles.lowerBound))-\(handleText(service.handles.upperBound))"
            lines.append("\(service.isPrimary ? "" : "secondary ")service \(label(service.uuid, service.name))  [\(range)]")
            for include in service.includedServices {
                lines.append("  includes \(label(include.uuid, include.name))  [\(handleText(include.handles.lowerBound))-\(handleText(include.handles.upperBound))]")
            }
            for characteristic in service.characteristics {
                guard let row = rows[characteristic.valueHandle] else { continue }
                lines.append("  characteristic \(label(characteristic.uuid, characteristic.name))  [\(handleText(characteristic.valueHandle))] \(characteristic.properties.names.joined(separator: " "))")
                if let reading = row.reading { lines.append("    value  \(reading.text)") }
                for (descriptor, reading) in row.descriptors {
                    lines.append("    descriptor \(label(descriptor.uuid, descriptor.name))  [\(handleText(descriptor.handle))]  \(reading.text)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// "180D Heart Rate", or the UUID alone when it has no name.
    static func label(_ uuid: BluetoothUUID, _ name: String?) -> String {
        name.map { "\(uuid) \($0)" } ?? uuid.description
    }

    static func json(_ peripheral: Peripheral, _ rows: [UInt16: Row]) -> JSONValue {
        .object([
            ("address", .string(peripheral.identifier.address.description)),
            ("addressType", .string(peripheral.identifier.type.description)),
            ("name", peripheral.name.map(JSONValue.string) ?? .null),
            ("mtu", .int(Int(peripheral.mtu))),
            ("databaseHash", peripheral.database?.databaseHash.map { .string(Hex.string($0)) } ?? .null),
            ("services", .array(peripheral.services.map { service in
                .object([
                    ("handle", .int(Int(service.handles.lowerBound))),
                    ("end", .int(Int(service.handles.upperBound))),
                    ("uuid", .string(service.uuid.description)),
                    ("name", service.name.map(JSONValue.string) ?? .null),
                    ("primary", .bool(service.isPrimary)),
                    ("includes", .array(service.declaration.includes.map { include in
                        .object([
                            ("handle", .int(Int(include.handle))),
                            ("start", .int(Int(include.serviceHandles.lowerBound))),
                            ("end", .int(Int(include.serviceHandles.upperBound))),
                            ("uuid", .string(include.uuid.description)),
                        ])
                    })),
                    ("characteristics", .array(service.characteristics.compactMap { characteristic in
                        rows[characteristic.valueHandle].map(characteristicJSON)
                    })),
                ])
            })),
        ])
    }

    static func characteristicJSON(_ row: Row) -> JSONValue {
        let characteristic = row.characteristic
        var members: [(String, JSONValue)] = [
            ("handle", .int(Int(characteristic.declaration.handle))),
            ("valueHandle", .int(Int(characteristic.valueHandle))),
            ("end", .int(Int(characteristic.declaration.endHandle))),
            ("uuid", .string(characteristic.uuid.description)),
            ("name", characteristic.name.map(JSONValue.string) ?? .null),
            ("properties", .int(Int(characteristic.properties.rawValue))),
            ("propertyNames", .array(characteristic.properties.names.map(JSONValue.string))),
        ]
        members += row.reading?.jsonMembers ?? [("value", .null)]
        members.append(("descriptors", .array(row.descriptors.map { descriptor, reading in
            .object([
                ("handle", .int(Int(descriptor.handle))),
                ("uuid", .string(descriptor.uuid.description)),
                ("name", descriptor.name.map(JSONValue.string) ?? .null),
            ] + reading.jsonMembers)
        })))
        return .object(members)
    }
}
