import ArgumentParser
import BareBLE
import BluetoothCore
import Bonding
import Glibc
import SMP
import ToolSupport

/// How a connecting subcommand secures the link: the pairing it offers, where bonds live,
/// and whether a refused read or write pairs and retries on its own.
struct PairingOptions: ParsableArguments {
    @Option(help: "Our IO capability when pairing: display-only, display-yesno, keyboard-only, no-input-no-output or keyboard-display.")
    var io: IOCapabilityArgument = .init(.noInputNoOutput)

    @Flag(name: .customLong("sc-only"), help: "Secure Connections Only: refuse legacy pairing and keys shorter than 16 octets.")
    var secureConnectionsOnly = false

    @Flag(name: .customLong("no-bond"), help: "Pair for this connection only: store no keys.")
    var noBond = false

    @Flag(name: .customLong("no-auto-pair"), help: "Do not pair when the device refuses an operation for want of encryption: report the refusal instead.")
    var noAutoPair = false

    @Option(name: .customLong("bond-dir"), help: "The bond directory (default $XDG_STATE_HOME/bareble/bonds, else ~/.local/state/bareble/bonds). Unused on hci-raw, where the kernel keeps the keys.")
    var bondDirectory: String = BondDirectory.defaultPath

    var configuration: PairingConfiguration {
        PairingConfiguration(
            ioCapability: io.value, bonding: !noBond, mitm: io.value != .noInputNoOutput,
            secureConnectionsOnly: secureConnectionsOnly)
    }

    /// The policy for a controller whose public address is `address`: bonds in the
    /// directory under that identity (none beside the kernel, which keeps its own).
    func policy(address: BluetoothAddress, kernel: Bool) throws -> SecurityPolicy {
        var bonds: BondStore?
        if !kernel {
            do {
                bonds = try BondStore(directory: bondDirectory, identity: .public(address))
            } catch {
                throw ToolError("cannot open the bond store: \(error)")
            }
        }
        return SecurityPolicy(pairing: configuration, bonds: bonds, pairsWhenRequired: !noAutoPair)
    }
}

/// `--io` on the command line.
struct IOCapabilityArgument: ExpressibleByArgument {
    let value: IOCapability

    init(_ value: IOCapability) { self.value = value }

    init?(argument: String) {
        guard let found = IOCapability.allCases.first(where: { $0.description == argument }) else { return nil }
        value = found
    }

    var defaultValueDescription: String { value.description }
    static var allValueStrings: [String] { IOCapability.allCases.map(\.description) }
}
