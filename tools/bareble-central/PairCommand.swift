import ArgumentParser
import BareBLE
import BluetoothCore
import GATT
import ToolSupport

/// `bareble-central pair ADDR`: connect, pair (bonding unless --no-bond), say how.
struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pair with a device and store the bond; passkeys and comparisons are asked on the terminal.",
        discussion: """
            The method follows from --io and the device's IO capabilities (Core Vol 3 Part H \
            Table 2.8): a passkey the device shows is asked for on stdin, a passkey to type on \
            the device is printed, a numeric comparison is asked as y/n; questions go to stderr. \
            Without an answer within --answer-timeout (or with stdin closed) the pairing is \
            cancelled. The bond goes to --bond-dir (see `bareble-central bonds`) and later \
            connections to the device are encrypted with it without pairing. An existing bond \
            with the device is replaced by a pairing at least as strong; a weaker one (Just \
            Works over an authenticated bond, legacy over Secure Connections, a shorter key) \
            is refused and the bond kept: `bonds remove` it first to pair that way. On \
            hci-raw:N the kernel pairs and keeps the keys.
            """
    )

    @OptionGroup var device: PeripheralOptions

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() async throws {
        // Not encrypted with an old bond first: a bond the device lost would fail the
        // connection, and pairing replaces it anyway.
        let (peer, outcome, file, name) = try await device.connect(encryptingWithBond: false) { central, peripheral in
            let outcome: SecurityOutcome
            do throws(PeripheralError) {
                outcome = try await peripheral.pair()
            } catch {
                throw ToolError(userMessage(error))
            }
            // One request over the link just secured before disconnecting: we distribute
            // our keys last, and a peer answers a link's PDUs in order, so its answer means
            // it has our keys (cut at once, Bumble dropped the end of its pairing). The
            // name is shown, and a peer without one is no failure.
            let name = try? await peripheral.gatt.readUsingCharacteristicUUID(GATTUUID.deviceName).first.map { GATTString.decode($0.value) }
            return (peripheral.identifier, outcome, central.security.bonds?.path, name)
        }
        writeOut((json ? Self.json(peer, outcome, file: file, name: name).text : Self.text(peer, outcome, file: file, name: name)) + "\n")
    }

    static func text(_ peer: DeviceAddress, _ outcome: SecurityOutcome, file: String?, name: String?) -> String {
        switch outcome {
        case let .paired(keys, saved):
            return [
                "paired with \(name.map { "\(TerminalText.printable($0)) " } ?? "")\(peer)",
                "  method          \(keys.method)",
                "  pairing         \(keys.secureConnections ? "LE Secure Connections" : "legacy")",
                "  authenticated   \(keys.authenticated ? "yes (MITM protection)" : "no (Just Works: no MITM protection)")",
                "  key size        \(keys.keySize) octets",
                "  identity        \(keys.identity.map { "\($0)" } ?? "none distributed")",
                "  bond            \(bondText(keys, peer: peer, saved: saved, file: file))",
            ].joined(separator: "\n")
        case .encryptedWithBond, .kernel:
            return "\(peer): \(outcome)"
        }
    }

    static func bondText(_ keys: PairingKeysSummary, peer: DeviceAddress, saved: Bool, file: String?) -> String {
        if saved { return "saved in \(file ?? "the bond store")" }
        guard keys.bonded else { return "none (no bonding: the keys last for this connection only)" }
        if !(keys.identity ?? peer).isIdentity {
            return "not saved: the device paired from a private address and distributed no identity, so it could not be recognised when it comes back"
        }
        return "not saved (no bond store)"
    }

    static func json(_ peer: DeviceAddress, _ outcome: SecurityOutcome, file: String?, name: String?) -> JSONValue {
        switch outcome {
        case let .paired(keys, saved):
            return .object([
                ("address", .string(peer.address.description)),
                ("addressType", .string(peer.type.description)),
                ("name", name.map(JSONValue.string) ?? .null),
                ("method", .string(keys.method)),
                ("secureConnections", .bool(keys.secureConnections)),
                ("authenticated", .bool(keys.authenticated)),
                ("keySize", .int(keys.keySize)),
                ("identity", keys.identity.map { .string($0.description) } ?? .null),
                ("bonded", .bool(keys.bonded)),
                ("bondSaved", .bool(saved)),
                ("bondFile", saved ? file.map(JSONValue.string) ?? .null : .null),
            ])
        case let .kernel(level):
            return .object([
                ("address", .string(peer.address.description)),
                ("addressType", .string(peer.type.description)),
                ("kernelSecurity", .string(level)),
            ])
        case let .encryptedWithBond(authenticated, keySize):
            return .object([
                ("address", .string(peer.address.description)),
                ("addressType", .string(peer.type.description)),
                ("encryptedWithStoredBond", .bool(true)),
                ("authenticated", .bool(authenticated)),
                ("keySize", .int(keySize)),
            ])
        }
    }
}
