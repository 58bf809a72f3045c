import ArgumentParser
import BareBLE
import BluetoothCore
import GATT
import ToolSupport

/// `bareble-central read ADDR CHAR`: one value, hex and decoded.
struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a characteristic's (or descriptor's) value and print it as hex and decoded.",
        discussion: "Long values are read completely (Read Blob). " + AttributeSelector.help
    )

    @OptionGroup var device: PeripheralOptions

    @Argument(help: "The characteristic: UUID or handle.")
    var characteristic: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        guard AttributeSelector(characteristic) != nil else { throw ValidationError("\(characteristic) is neither a UUID nor a handle. \(AttributeSelector.help)") }
    }

    func run() async throws {
        let selector = AttributeSelector(characteristic)!
        let text = try await device.connect { _, peripheral in
            let attribute = try await peripheral.select(selector, address: device.address)
            let reading: ValueReading
            switch attribute {
            case .characteristic(let characteristic):
                // A Presentation Format decides how an unknown characteristic decodes.
                if let format = characteristic.descriptor(GATTUUID.characteristicPresentationFormat) {
                    _ = try? await peripheral.readValue(for: format)
                }
                reading = try await peripheral.reading(characteristic)
            case .descriptor(let descriptor):
                reading = try await peripheral.reading(descriptor)
            }
            if let error = reading.error { throw ToolError(userMessage(error, doing: "reading \(selector)")) }
            return json ? JSONValue.object([("uuid", .string(attribute.uuid.description))] + reading.jsonMembers).text : reading.text
        }
        writeOut(text + "\n")
    }
}

extension Peripheral {
    /// Discovers the database and finds what CHAR names in it.
    func select(_ selector: AttributeSelector, address: String) async throws -> SelectedAttribute {
        do {
            try await discoverServices()
        } catch {
            throw ToolError(userMessage(error, doing: "discovering the services"))
        }
        return try SelectedAttribute(selector, in: self, address: address)
    }
}
