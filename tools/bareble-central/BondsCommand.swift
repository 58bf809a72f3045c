import ArgumentParser
import BluetoothCore
import Bonding
import Glibc
import HCITransport
import KernelHost
import SMP
import ToolSupport

/// `bareble-central bonds [list|remove ADDR]`: the bond store, offline (no controller).
struct Bonds: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List or remove stored bonds (no controller needed).",
        discussion: """
            Bonds live in one JSON file per local identity in --bond-dir (default \
            $XDG_STATE_HOME/bareble/bonds, else ~/.local/state/bareble/bonds). Keys are never printed. \
            On hci-raw the kernel's keys are kept there too; `remove` also makes the kernel of every \
            powered adapter with that identity forget the peer (and drop its link).
            """,
        subcommands: [List.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct Location: ParsableArguments {
        @Option(name: .customLong("bond-dir"), help: "The bond directory.")
        var directory: String = BondDirectory.defaultPath

        @Flag(help: "JSON instead of the human text.")
        var json = false
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every local identity's bonds.")

        @OptionGroup var location: Location

        func run() throws {
            let files: [(path: String, contents: Result<StoredBonds, BondStoreError>)]
            do {
                files = try BondStore.readAll(directory: location.directory)
            } catch {
                throw ToolError(error.description)
            }
            var damaged = 0
            var identities: [JSONValue] = []
            for file in files {
                switch file.contents {
                case let .success(stored):
                    if location.json {
                        identities.append(BondsReport.json(stored, path: file.path))
                    } else {
                        print(BondsReport.text(stored, path: file.path))
                    }
                case let .failure(error):
                    damaged += 1
                    printError("bareble-central: \(error)")
                }
            }
            if location.json {
                print(JSONValue.object([("directory", .string(location.directory)), ("identities", .array(identities))]).text)
            } else if files.isEmpty {
                print("no bonds in \(location.directory)")
            }
            if damaged > 0 { throw ExitCode(1) }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget a peer: its bond is removed from every local identity that has one, and from the kernel of each powered adapter with that identity.")

        @Argument(help: "The peer's identity address (AA:BB:CC:DD:EE:FF, optionally /public or /random), or an RPA of it.")
        var address: String

        @OptionGroup var location: Location

        func run() throws {
            guard let parsed = DeviceAddress(address) else { throw ToolError("\(address) is not an address (AA:BB:CC:DD:EE:FF[/public|/random])") }
            // Without a suffix the user means the device, whatever its address type.
            let candidates = address.contains("/")
                ? [parsed] : [DeviceAddress(parsed.address, type: .public), DeviceAddress(parsed.address, type: .random)]
            var removed: [JSONValue] = []
            do throws(BondStoreError) {
                for file in try BondStore.readAll(directory: location.directory) {
                    let stored: StoredBonds
                    switch file.contents {
                    case let .success(value): stored = value
                    case let .failure(error): throw error
                    }
                    let resolver = BondResolver(bonds: stored.bonds)
                    let peers = Set(candidates.compactMap { resolver.identity(for: $0) })
                    guard !peers.isEmpty else { continue }
                    let identity: BondStore.Identity = stored.local.address.type == .public
                        ? .public(stored.local.address.address) : .randomStatic(stored.local.address.address)
                    let store = try BondStore(directory: location.directory, identity: identity)
                    for peer in peers.sorted(by: { $0.address < $1.address }) {
                        guard try store.remove(peer) else { continue }
                        if !location.json { print("removed \(peer) from \(stored.local.address) (\(file.path))") }
                        let kernels = Self.unpairInKernels(peer, local: stored.local.address, json: location.json)
                        removed.append(.object([
                            ("peer", .string(peer.description)), ("local", .string(stored.local.address.description)),
                            ("file", .string(file.path)), ("kernel", .array(kernels.map(JSONValue.string))),
                        ]))
                    }
                }
            } catch {
                throw ToolError(error.description)
            }
            if location.json { print(JSONValue.object([("removed", .array(removed))]).text) }
            if removed.isEmpty {
                if !location.json { printError("bareble-central: no bond for \(address) in \(location.directory)") }
                throw ExitCode(1)
            }
        }
    }
}

extension Bonds.Remove {
    /// Unpair Device (disconnect) on every powered adapter whose address is the public
    /// identity `local`: the kernel loaded the bond, or made it, and would keep encrypting
    /// with it. Returns the adapters whose kernel dropped keys. A machine without kernel
    /// Bluetooth has no keys to drop; a failure is a warning (the store's bond is gone, and
    /// the kernel gets the store again at the next attach).
    static func unpairInKernels(_ peer: DeviceAddress, local: DeviceAddress, json: Bool) -> [String] {
        guard local.type == .public, let adapters = try? Adapters.list() else { return [] }
        var unpaired: [String] = []
        for adapter in adapters where adapter.address == local.address && adapter.isUp && !adapter.isHeld {
            do throws(TransportError) {
                let dropped = try KernelManagement.unpair(index: adapter.index, peer: peer, disconnect: true)
                if dropped { unpaired.append(adapter.name) }
                if !json { print("\(adapter.name)'s kernel \(dropped ? "forgot \(peer)" : "held no keys for \(peer)")") }
            } catch {
                printError("bareble-central: warning: \(adapter.name)'s kernel may still hold keys for \(peer): \(error)")
            }
        }
        return unpaired
    }
}

/// How `bonds list` shows one identity's bonds: which keys exist, never their values.
enum BondsReport {
    static func text(_ stored: StoredBonds, path: String) -> String {
        var lines = ["\(stored.local.address) (\(stored.bonds.count) bond\(stored.bonds.count == 1 ? "" : "s"), \(path))"]
        for bond in stored.bonds {
            let security = [bond.secureConnections ? "secure connections" : "legacy", bond.authenticated ? "authenticated" : "unauthenticated"]
            lines.append("  \(bond.peer)  \(security.joined(separator: ", "))  keys: \(keyNames(bond.peerKeys))  since \(date(bond.createdAt))")
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ stored: StoredBonds, path: String) -> JSONValue {
        .object([
            ("local", .string(stored.local.address.description)),
            ("file", .string(path)),
            ("bonds", .array(stored.bonds.map { bond in
                .object([
                    ("peer", .string(bond.peer.address.description)),
                    ("type", .string(bond.peer.type.isRandom ? "random" : "public")),
                    ("secure_connections", .bool(bond.secureConnections)),
                    ("authenticated", .bool(bond.authenticated)),
                    ("key_size", bond.peerKeys.longTermKey.map { .int(Int($0.keySize)) } ?? .null),
                    ("peer_keys", .array(keyList(bond.peerKeys).map(JSONValue.string))),
                    ("local_keys", .array(keyList(bond.localKeys).map(JSONValue.string))),
                    ("created", .int(Int(bond.createdAt))),
                ])
            })),
        ])
    }

    static func keyList(_ keys: DistributedKeys) -> [String] {
        var names: [String] = []
        if let ltk = keys.longTermKey { names.append("ltk/\(ltk.keySize)") }
        if keys.identityResolvingKey != nil { names.append("irk") }
        if keys.signatureKey != nil { names.append("csrk") }
        return names
    }

    static func keyNames(_ keys: DistributedKeys) -> String {
        let names = keyList(keys)
        return names.isEmpty ? "none" : names.joined(separator: ",")
    }

    /// "2026-11-22 05:28:01 UTC" without Foundation.
    static func date(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(seconds)" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}
