import BluetoothCore
import Bonding
import SMP

/// How a ``Central`` secures its links: what pairing offers and demands, who answers the
/// user's side of it, where bonds are kept, and whether a refused operation pairs and
/// retries on its own (CoreBluetooth pairs when a characteristic needs it; so does this,
/// by default).
public struct SecurityPolicy: Sendable {
    /// IO capability, bonding, MITM, Secure Connections Only, minimum key size. Its
    /// `localIdentity` is taken from ``bonds`` when left nil and the store's identity is
    /// the controller's public address we connect from, so bonded peers learn our IRK.
    public var pairing: PairingConfiguration
    /// Shows and asks for passkeys and numeric comparison; without one only Just Works
    /// (and OOB) pairings complete.
    public var delegate: (any PairingDelegate)?
    /// Where bonds are kept: a pairing that bonds is saved here, and a bonded peer's link
    /// is encrypted with the stored key as soon as it connects. Nil: nothing is stored
    /// (pairing still secures that one connection).
    public var bonds: BondStore?
    /// When a read, write or subscription is refused with Insufficient Authentication,
    /// Insufficient Encryption or Encryption Key Size: raise the link's security (the
    /// stored bond's key, else pairing) and retry once.
    public var pairsWhenRequired: Bool
    /// Whether a peer with a stored bond is encrypted with it as it connects (the default).
    /// Off for a connection made only to pair afresh (`bareble-central pair`): a bond the
    /// peer lost would otherwise fail the connection before the new pairing could replace it.
    public var encryptsBondedPeersAtConnect: Bool
    /// LE privacy as a peripheral (Core Vol 3 Part C 10.7): ``PeripheralHost`` advertises
    /// from resolvable private addresses of the bond store's IRK (a fresh one each time
    /// advertising starts, and every 15 minutes), so only bonded centrals, which hold our
    /// IRK, can tell it is us. Needs ``bonds``. Connections we make as central still go out
    /// from the public address.
    public var privacy: Bool

    public init(
        pairing: PairingConfiguration = PairingConfiguration(), delegate: (any PairingDelegate)? = nil,
        bonds: BondStore? = nil, pairsWhenRequired: Bool = true, encryptsBondedPeersAtConnect: Bool = true,
        privacy: Bool = false
    ) {
        self.privacy = privacy
        self.pairing = pairing
        self.delegate = delegate
        self.bonds = bonds
        self.pairsWhenRequired = pairsWhenRequired
        self.encryptsBondedPeersAtConnect = encryptsBondedPeersAtConnect
    }

    /// The pairing configuration in effect on a link from `controllerAddress` (public):
    /// ours with the bond store's identity. A peer stores our bond under the identity we
    /// distribute and looks it up by the address we connect from, so an identity that is
    /// not that address (another controller's, a random static one we do not connect from)
    /// is not distributed: the peer then keeps the bond under our on-air address.
    func effectivePairing(controllerAddress: BluetoothAddress?) -> PairingConfiguration {
        var configuration = pairing
        if configuration.localIdentity == nil, configuration.bonding, let local = bonds?.local,
           let controllerAddress, local.address == DeviceAddress(controllerAddress, type: .public) {
            configuration.localIdentity = IdentityKey(identityResolvingKey: local.identityResolvingKey, address: local.address)
        }
        return configuration
    }
}
