import BluetoothCore
import SMP

/// `--address`: whether a packet is about one device, also under the resolvable private
/// addresses it uses (Core 5.4 Vol 6 Part B 1.3.2.3, resolved on the host with `ah`).
///
/// A packet is about the device when it names its address (an advertising report, a
/// connection's peer as LE Connection Complete or Enhanced gave it, for every packet of
/// that connection), or an RPA that resolves with one of the device's IRKs. The device's
/// IRKs are those given as its own (`--irk`), and among known identities (a bond store's,
/// those exchanged in the trace) each whose identity address is the device's, or whose
/// IRK resolves the address given (the user named the device by one of its RPAs); the
/// identity address of such an identity then names the device too.
///
/// The trace is read once, forwards: packets before the key exchange that made an RPA
/// resolvable stay unmatched (a second pass with `--irk` finds them).
///
/// Cost: one AES block per IRK for each new RPA; answers are remembered per address, up to
/// ``maximumRemembered`` (then forgotten all at once and worked out again), and forgotten
/// whenever a new IRK is learnt. A trace can claim any number of IRKs for the device; past
/// ``maximumKeys`` learnt ones the oldest learnt is dropped (counted in ``forgottenKeys``;
/// `--irk` keys are kept), so a hostile capture cannot make every RPA cost thousands of AES
/// blocks.
public struct AddressFilter: Sendable {
    public static let maximumRemembered = 4096
    public static let maximumKeys = 64

    public let address: BluetoothAddress
    public private(set) var keys: [SMPValue128]
    /// The device's own addresses: the one asked for and the identities it resolves to.
    public private(set) var identities: Set<BluetoothAddress>
    private var remembered: [BluetoothAddress: Bool] = [:]
    /// IRKs dropped past ``maximumKeys``.
    public private(set) var forgottenKeys = 0
    /// How many of ``keys`` (the first) were given, not learnt.
    private var given = 0

    public init(address: BluetoothAddress, keys: [SMPValue128] = [], known: [ExchangedIdentity] = []) {
        self.address = address
        self.keys = []
        identities = [address]
        for key in keys { adopt(key, identity: nil) }
        given = self.keys.count
        for identity in known { learn(identity) }
    }

    /// Takes `identity` as the device's when its address is one of the device's, or its
    /// IRK resolves the address asked for.
    public mutating func learn(_ identity: ExchangedIdentity) {
        guard identities.contains(identity.address) || address.resolves(with: identity.irk) else { return }
        adopt(identity.irk, identity: identity.address)
    }

    private mutating func adopt(_ irk: SMPValue128, identity: BluetoothAddress?) {
        if let identity { identities.insert(identity) }
        guard !keys.contains(irk) else { return }
        if keys.count - given == Self.maximumKeys {
            keys.remove(at: given)
            forgottenKeys += 1
        }
        keys.append(irk)
        remembered = [:]
    }

    /// Learns the identity a packet carries, then says whether the packet is the device's.
    public mutating func matches(_ packet: TracePacket) -> Bool {
        if let identity = packet.exchangedIdentity { learn(identity) }
        return packet.addresses.contains { isDevice($0) }
    }

    public mutating func isDevice(_ candidate: BluetoothAddress) -> Bool {
        if identities.contains(candidate) { return true }
        guard !keys.isEmpty else { return false }
        if let known = remembered[candidate] { return known }
        if remembered.count >= Self.maximumRemembered { remembered = [:] }
        // `resolves` checks the RPA form (top bits 0b01) before any AES.
        let resolved = keys.contains { candidate.resolves(with: $0) }
        remembered[candidate] = resolved
        return resolved
    }
}
