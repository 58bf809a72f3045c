import ArgumentParser
import BluetoothCore
import HCI
import HCITransport
import ToolSupport

/// `bareble-central hci OPCODE [HEX]`: any command, as `hcitool cmd` sent it, with what it
/// provoked decoded by the trace decoder.
struct RawHCI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hci",
        abstract: "Send any HCI command and print its Command Complete or Status and the events it caused, decoded.",
        discussion: """
            OPCODE is 0xNNNN (0x1009 is Read BD_ADDR) or OGF/OCF (0x04/0x0009); HEX the parameters, \
            sent as given (up to 255 bytes; spaces and colons allowed). The controller is not reset \
            or set up first: the command is the first thing it gets from this run. Printed as \
            `bareble-trace -v` shows packets: the command, its answer, and every event within \
            --window seconds after it (on a controller shared with the kernel, also what others \
            caused meanwhile).
            """
    )

    @OptionGroup var options: TransportOptions

    @Argument(help: "The opcode: 0xNNNN, or OGF/OCF.")
    var opcode: String

    @Argument(help: "The parameters as hex (none by default).")
    var parameters: String = ""

    @Option(help: "Seconds to wait for the Command Complete or Status.")
    var timeout: Double = 5

    @Option(help: "Seconds to keep printing events after the answer.")
    var window: Double = 0.5

    @Flag(help: "One JSON object per packet, as bareble-trace --json.")
    var json = false

    /// OGF/OCF or a 16-bit opcode, hex with 0x or decimal.
    static func parseOpcode(_ text: String) -> HCIOpcode? {
        func number(_ part: Substring) -> UInt16? {
            part.hasPrefix("0x") || part.hasPrefix("0X") ? UInt16(part.dropFirst(2), radix: 16) : UInt16(part)
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return number(parts[0]).map(HCIOpcode.init(rawValue:))
        case 2:
            guard let ogf = number(parts[0]), ogf <= 0x3F, let ocf = number(parts[1]), ocf <= 0x3FF else { return nil }
            return HCIOpcode(ogf: UInt8(ogf), ocf: ocf)
        default: return nil
        }
    }

    func validate() throws {
        guard Self.parseOpcode(opcode) != nil else { throw ValidationError("\(opcode) is not an opcode: give 0xNNNN (16 bits) or OGF/OCF (6 and 10 bits), e.g. 0x1009 or 0x04/0x0009") }
        guard let bytes = Hex.bytes(parameters) else { throw ValidationError("\(parameters) is not hex: give pairs of hex digits such as 0102ff") }
        guard bytes.count <= 255 else { throw ValidationError("\(bytes.count) bytes of parameters: a command carries at most 255") }
        guard timeout.isFinite, timeout > 0, timeout < 1e6 else { throw ValidationError("--timeout \(timeout) is not a positive number of seconds") }
        guard window.isFinite, window >= 0, window < 1e6 else { throw ValidationError("--window \(window) is not a number of seconds") }
    }

    func run() async throws {
        let opcode = Self.parseOpcode(opcode)!
        let bytes = Hex.bytes(parameters)!
        let trace = ProvokedTrace()
        let controller = try options.openController(tap: trace.tap)
        defer { controller.close() }
        var packet = [UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), UInt8(bytes.count)]
        packet += bytes
        // A command BareBLE has no type for may be answered either way: a Command Status
        // then ends the wait as a Command Complete would.
        let completesWithStatus = HCICommands.type(for: opcode)?.completesWithStatus ?? true
        var failure: HCIError?
        do {
            _ = try await controller.sendPacket(
                HCIPacket(.command, packet), opcode: opcode, completesWithStatus: completesWithStatus,
                timeout: PeripheralOptions.duration(timeout))
        } catch {
            failure = error
        }
        let collected = await trace.collect(within: failure == nil ? PeripheralOptions.duration(window) : .zero)
        ProvokedTrace.print(collected.packets, json: json)
        if trace.dropped > 0 { printError("bareble-central: \(trace.dropped) packets came faster than they were printed and were left out") }
        if let failure {
            if case .commandTimedOut = failure {
                throw ToolError("no Command Complete or Command Status for \(opcode.name) within \(timeout) s: the controller ignored it (raise --timeout if it is slow)")
            }
            throw ToolError(failure.description)
        }
    }
}
