import ArgumentParser
import BareBLE
import BluetoothCore
import Bonding
import Glibc
import SMP

/// How a connecting subcommand secures the link: the pairing it offers, where bonds live,
/// and whether a refused read or write pairs and retries on its own.
public struct PairingOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(help: "Our IO capability when pairing: display-only, display-yesno, keyboard-only, no-input-no-output or keyboard-display.")
    public var io: IOCapabilityArgument = .init(.noInputNoOutput)

    @Flag(name: .customLong("sc-only"), help: "Secure Connections Only: refuse legacy pairing, the keys of a bond it made, and keys shorter than 16 octets.")
    public var secureConnectionsOnly = false

    @Flag(name: .customLong("no-bond"), help: "Pair for this connection only: store no keys.")
    public var noBond = false

    @Flag(name: .customLong("no-auto-pair"), help: "Do not pair when the device refuses an operation for want of encryption: report the refusal instead.")
    public var noAutoPair = false

    @Option(name: .customLong("answer-timeout"), help: "Seconds to wait for a typed passkey or a y/n answer before cancelling the pairing (below the 30 s SMP timeout).")
    public var answerTimeout: Double = 25

    @Option(name: .customLong("bond-dir"), help: "The bond directory (default $XDG_STATE_HOME/bareble/bonds, else ~/.local/state/bareble/bonds). On hci-raw the kernel's keys are kept there too and loaded into it at the first connection.")
    public var bondDirectory: String = BondDirectory.defaultPath

    public func validate() throws {
        guard answerTimeout.isFinite, answerTimeout > 0, answerTimeout < 30 else {
            throw ValidationError("--answer-timeout \(answerTimeout) must be more than 0 and less than 30 seconds: the device gives up on the pairing after 30 s without an answer")
        }
    }

    public var configuration: PairingConfiguration {
        PairingConfiguration(
            ioCapability: io.value, bonding: !noBond, mitm: io.value != .noInputNoOutput,
            secureConnectionsOnly: secureConnectionsOnly)
    }

    /// The policy for a controller whose public address is `address`: bonds in the
    /// directory under that identity (beside the kernel too: the facade keeps the kernel's
    /// keys there and loads them into it), and the
    /// terminal answering passkey and comparison questions, so a pairing started on its own
    /// (a refused read, a Security Request) can ask as well as `pair` can.
    public func policy(address: BluetoothAddress) throws -> SecurityPolicy {
        let bonds: BondStore
        do {
            bonds = try BondStore(directory: bondDirectory, identity: .public(address))
        } catch {
            throw ToolError("cannot open the bond store: \(error)")
        }
        return SecurityPolicy(
            pairing: configuration, delegate: TerminalPairingDelegate(answerTimeout: answerTimeout),
            bonds: bonds, pairsWhenRequired: !noAutoPair)
    }
}

/// `--io` on the command line.
public struct IOCapabilityArgument: ExpressibleByArgument, Sendable {
    public let value: IOCapability

    public init(_ value: IOCapability) { self.value = value }

    public init?(argument: String) {
        guard let found = IOCapability(name: argument) else { return nil }
        value = found
    }

    public var defaultValueDescription: String { value.name }
    public static var allValueStrings: [String] { IOCapability.allCases.map(\.name) }
}
