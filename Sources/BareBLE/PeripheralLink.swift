import ATT
import BluetoothCore
import HCI

/// What carries a ``Peripheral``'s ATT bearer, and how its security is raised: BareBLE's
/// own host (``HostLink``: HCI connection, L2CAP, SMP) or the kernel's L2CAP ATT socket on
/// `hci-raw:N` (``KernelLink``: the kernel made the connection and runs SMP). The GATT
/// side of a peripheral is the same over both.
protocol PeripheralLink: Sendable {
    var peer: DeviceAddress { get }
    var bearer: any ATTBearer { get }
    /// The HCI connection when BareBLE's host made it; nil over the kernel's socket.
    var connection: Connection? { get }
    var isConnected: Bool { get }
    /// Why the link ended; nil while it is up (or when the transport closed).
    var disconnectReason: HCIErrorCode? { get }
    var isEncrypted: Bool { get }

    /// Ends the link after everything queued was handed on.
    func disconnect() async throws(PeripheralError)
    /// Waits for the link to end, by either side.
    func disconnection() async throws(PeripheralError) -> HCIErrorCode
    /// Pairs now (`explicit`), or raises the link's security the cheapest way (a stored
    /// bond's key when there is one, else pairing): what a failed operation needs.
    func secure(explicit: Bool) async throws(PeripheralError) -> SecurityOutcome
    /// Detaches what the link registered below (SMP handlers); the link itself stays.
    func close()
    /// Makes the link's one ATT client on ``bearer``, with `server` when we serve on the
    /// link. A link whose end is its ATT bearer's end (the kernel's socket) keeps it.
    func makeATTClient(server: ATTServer?) -> ATTClient
}

extension PeripheralLink {
    /// A link that ends with its HCI connection needs nothing of its client.
    func makeATTClient(server: ATTServer?) -> ATTClient {
        ATTClient(bearer: bearer, server: server)
    }
}

/// What raising a link's security did.
public enum SecurityOutcome: Sendable, CustomStringConvertible {
    /// SMP ran on this link. `bondSaved`: the keys were written to the bond store (false
    /// when the pairing did not bond, no store is configured, or the store kept what it
    /// had: a peer that gave no identity, or a stronger bond of the identity it gave; the
    /// host logs which).
    case paired(PairingKeysSummary, bondSaved: Bool)
    /// The link was encrypted with a stored bond's key, without pairing.
    case encryptedWithBond(authenticated: Bool, keySize: Int)
    /// The kernel brought the link to this BT_SECURITY level (`hci-raw:N`): it paired, or
    /// encrypted with a key it already held. Its keys stay in the kernel.
    case kernel(level: String)

    public var description: String {
        switch self {
        case let .paired(keys, saved):
            "paired: \(keys)" + (saved ? ", bond saved" : keys.bonded ? ", bond not saved" : ", no bonding")
        case let .encryptedWithBond(authenticated, keySize):
            "encrypted with the stored bond (\(authenticated ? "authenticated" : "unauthenticated"), \(keySize)-octet key)"
        case let .kernel(level):
            "the kernel secured the link (security \(level))"
        }
    }
}

/// A pairing's result without its keys: what a caller may print or decide on.
public struct PairingKeysSummary: Sendable, Hashable, CustomStringConvertible {
    public var method: String
    public var secureConnections: Bool
    public var authenticated: Bool
    public var keySize: Int
    public var bonded: Bool
    /// The peer's identity address when it distributed one (its IRK resolves its RPAs).
    public var identity: DeviceAddress?

    public var description: String {
        "\(method), \(secureConnections ? "LE Secure Connections" : "legacy"), "
            + "\(authenticated ? "authenticated" : "unauthenticated"), \(keySize)-octet key"
            + (identity.map { ", identity \($0)" } ?? "")
    }
}
