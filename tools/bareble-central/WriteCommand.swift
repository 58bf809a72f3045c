import ArgumentParser
import BareBLE
import BluetoothCore
import ToolSupport

/// `bareble-central write ADDR CHAR VALUE`: one write, with or without response.
struct Write: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a value to a characteristic (or descriptor).",
        discussion: """
            VALUE is hex (0102ff, spaces and colons allowed) unless --text, which writes its UTF-8 \
            bytes. With a response (the default) values up to 512 bytes are written, long ones \
            with Prepare/Execute Write; --without-response sends one Write Command of at most \
            ATT_MTU - 3 bytes and nothing confirms it arrived. 
            """ + AttributeSelector.help
    )

    @OptionGroup var device: PeripheralOptions

    @Argument(help: "The characteristic: UUID or handle.")
    var characteristic: String

    @Argument(help: "The value: hex, or text with --text.")
    var value: String

    @Flag(name: .customLong("without-response"), help: "Send a Write Command (no confirmation).")
    var withoutResponse = false

    @Flag(help: "VALUE is text, written as UTF-8.")
    var text = false

    func validate() throws {
        guard AttributeSelector(characteristic) != nil else { throw ValidationError("\(characteristic) is neither a UUID nor a handle. \(AttributeSelector.help)") }
        guard text || Hex.bytes(value) != nil else { throw ValidationError("\(value) is not hex: give pairs of hex digits such as 0102ff, or use --text") }
    }

    func run() async throws {
        let selector = AttributeSelector(characteristic)!
        let bytes = text ? Array(value.utf8) : Hex.bytes(value)!
        let type: Peripheral.WriteType = withoutResponse ? .withoutResponse : .withResponse
        let summary = try await device.connect { _, peripheral in
            let attribute = try await peripheral.select(selector, address: device.address)
            do {
                switch attribute {
                case .characteristic(let characteristic):
                    if withoutResponse, !characteristic.properties.contains(.writeWithoutResponse) {
                        printError("warning: \(characteristic.uuid) does not list write without response; the peer may drop the value silently")
                    }
                    try await peripheral.writeValue(bytes, for: characteristic, type: type)
                case .descriptor(let descriptor):
                    guard !withoutResponse else { throw ToolError("descriptors are written with a response only: drop --without-response") }
                    try await peripheral.writeValue(bytes, for: descriptor)
                }
            } catch let error as PeripheralError {
                throw ToolError(userMessage(error, doing: "writing \(selector)"))
            }
            return "wrote \(bytes.count) bytes to \(attribute.uuid) \(withoutResponse ? "without response (unconfirmed)" : "(confirmed)")"
        }
        writeOut(summary + "\n")
    }
}
