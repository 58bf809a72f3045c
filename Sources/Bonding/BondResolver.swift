import BluetoothCore
import HCI
import SMP

/// Maps the addresses peers use on the air to their bonds (Core Vol 6 Part B 1.3.2.3,
/// host-side resolution): an identity address directly, an RPA by trying each stored peer
/// IRK with ah. A value, so a scan consumer or a connector can hold a snapshot without a
/// lock; make a new one (``BondStore/resolver``) after the bonds change.
///
/// Cost: one AES block per bond with an IRK for each RPA that is not an identity; a few
/// microseconds per bond, which is fine for the tens of bonds a host keeps. Callers that
/// see the same RPA often can remember the answer: an RPA's owner does not change.
public struct BondResolver: Sendable {
    public let bonds: [Bond]
    private let byIdentity: [DeviceAddress: Int]
    /// Bonds whose peer distributed an IRK, by index into ``bonds``.
    private let resolvable: [(irk: SMPValue128, index: Int)]

    public init(bonds: [Bond]) {
        self.bonds = bonds
        var byIdentity: [DeviceAddress: Int] = [:]
        var resolvable: [(irk: SMPValue128, index: Int)] = []
        for (index, bond) in bonds.enumerated() {
            byIdentity[bond.peer] = index
            if let irk = bond.peerKeys.identityResolvingKey { resolvable.append((irk, index)) }
        }
        self.byIdentity = byIdentity
        self.resolvable = resolvable
    }

    /// The bond of whoever uses `address`, or nil.
    ///
    /// - Public and random static addresses match a stored identity exactly.
    /// - Identity types (0x02, 0x03: the controller already resolved the RPA) name the
    ///   identity directly.
    /// - A resolvable private address is resolved against every stored peer IRK.
    /// - Non-resolvable private addresses belong to nobody.
    public func bond(for address: DeviceAddress) -> Bond? {
        switch address.type {
        case .public, .publicIdentity:
            return byIdentity[DeviceAddress(address.address, type: .public)].map { bonds[$0] }
        case .randomIdentity:
            return byIdentity[DeviceAddress(address.address, type: .random)].map { bonds[$0] }
        case .random:
            switch address.kind {
            case .randomStatic:
                return byIdentity[address].map { bonds[$0] }
            case .resolvablePrivate:
                return resolvable.first { address.address.resolves(with: $0.irk) }.map { bonds[$0.index] }
            case .public, .nonResolvablePrivate, .randomReserved:
                return nil
            }
        }
    }

    /// The identity address behind `address` when a bond knows it.
    public func identity(for address: DeviceAddress) -> DeviceAddress? {
        bond(for: address)?.peer
    }

    /// The bond of the device that sent `advertisement`.
    public func bond(for advertisement: Advertisement) -> Bond? {
        bond(for: advertisement.address)
    }
}
