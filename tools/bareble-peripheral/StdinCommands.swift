import BareBLE
import BluetoothCore
import GATT
import ToolSupport

/// The commands `serve` takes on stdin, one per line, each answered with a `sent`,
/// `queue-full` or `error` line.
struct StdinCommands {
    let manager: PeripheralManager
    let output: EventOutput

    /// Reads until stdin closes (serving goes on) or the task is cancelled.
    func run() async {
        await TerminalInput.shared.commands(perform)
    }

    private func perform(_ command: String) async {
        let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return }
        switch (verb, words.count) {
        case ("disconnect", 1):
            let links = manager.centrals
            for link in links { try? await link.disconnect() }
            output.line([("event", .string("sent")), ("command", .string(command)), ("centrals", .int(links.count))], text: "disconnected \(links.count) centrals")
        case ("notify", 3), ("indicate", 3), ("set", 3):
            guard let selector = AttributeSelector(words[1]), let value = Hex.bytes(words[2]) else {
                return fail(command, "give \(verb) UUID|HANDLE HEX")
            }
            guard let characteristic = characteristic(selector) else { return fail(command, "no characteristic \(selector)") }
            guard value.count <= GATTServerStore.maximumValueLength else {
                return fail(command, "a value is at most \(GATTServerStore.maximumValueLength) octets, not \(value.count)")
            }
            let wanted: ClientCharacteristicConfiguration = verb == "notify" ? .notification : .indication
            // `set` stores and tells every subscriber; notify and indicate only those
            // subscribed that way.
            let centrals: [RemoteCentral]? = verb == "set" ? nil : manager.centrals.filter { link in
                manager.store.subscribers(of: characteristic.valueHandle)[link.handle]?.contains(wanted) == true
            }
            if verb != "set", centrals?.isEmpty == true {
                manager.store.setValue(value, at: characteristic.valueHandle)
                return output.line([("event", .string("sent")), ("command", .string(command)), ("subscribers", .int(0))], text: "nobody is subscribed: \(characteristic.uuid) set, not sent")
            }
            let delivered = manager.updateValue(value, for: characteristic.valueHandle, onSubscribedCentrals: centrals, as: verb == "set" ? nil : wanted)
            output.line([("event", .string(delivered ? "sent" : "queue-full")), ("command", .string(command))],
                        text: delivered ? "\(verb): \(characteristic.uuid) \(Hex.string(value))" : "a central's queue is full: send again after the ready event")
        default:
            fail(command, "commands: notify CHAR HEX, indicate CHAR HEX, set CHAR HEX, disconnect")
        }
    }

    private func characteristic(_ selector: AttributeSelector) -> GATTDatabase.Characteristic? {
        switch selector {
        case let .uuid(uuid): manager.database.characteristic(uuid)
        // Its declaration, value or one of its descriptors: the handles a central's
        // discovery or our `subscribed` events show.
        case let .handle(handle): manager.database.services.flatMap(\.characteristics).first { $0.handle <= handle && handle <= $0.endHandle }
        }
    }

    private func fail(_ command: String, _ why: String) {
        output.line([("event", .string("error")), ("command", .string(command)), ("error", .string(why))], text: "\(command): \(why)")
    }
}
