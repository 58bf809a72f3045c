import ArgumentParser
import BluetoothCore
import Bonding
import SMP
import ToolSupport
import Trace

/// The IRKs `--address` resolves private addresses with: given, and from the bond store.
/// (Those exchanged in the trace itself are learnt as it is read: ``AddressFilter``.)
struct AddressKeyOptions: ParsableArguments {
    @Option(name: .long, help: "With --address: an IRK of that device (32 hex digits, most significant first, as the specification prints them), to match its resolvable private addresses (repeatable).")
    var irk: [String] = []

    @Option(name: .customLong("bond-dir"), help: "With --address: the bond store whose peers' IRKs resolve the device's private addresses (default $XDG_STATE_HOME/bareble/bonds, else ~/.local/state/bareble/bonds).")
    var bondDirectory: String = BondDirectory.defaultPath

    func validate() throws {
        for key in irk where SMPValue128(hex: key) == nil {
            throw ValidationError("--irk \(key) is not 16 bytes of hex (32 digits, e.g. ec0234a357c8ad05341010a60a397d9b)")
        }
    }

    /// The filter for `address`: the given IRKs as the device's, every bonded peer's IRK
    /// and identity as candidates. A bond file that does not read is said on stderr and
    /// skipped; a missing store is no bonds.
    func filter(for address: BluetoothAddress) throws -> AddressFilter {
        var known: [ExchangedIdentity] = []
        let files: [(path: String, contents: Result<StoredBonds, BondStoreError>)]
        do {
            files = try BondStore.readAll(directory: bondDirectory)
        } catch {
            throw ToolError("--bond-dir: \(error)")
        }
        for file in files {
            switch file.contents {
            case let .success(stored):
                for bond in stored.bonds {
                    guard let key = bond.peerKeys.identityResolvingKey else { continue }
                    known.append(ExchangedIdentity(irk: key, address: bond.peer.address))
                }
            case let .failure(error):
                printError("bareble-trace: bond file skipped: \(error)")
            }
        }
        return AddressFilter(address: address, keys: irk.compactMap(SMPValue128.init(hex:)), known: known)
    }
}
