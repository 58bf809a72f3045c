import BluetoothCore
import HCI
import SMP

/// What happened on a ``PeripheralHost``, in order, from ``PeripheralHost/events()``.
public enum PeripheralHostEvent: Sendable {
    /// Advertising (re)started from this address (our RPA when privacy is on).
    case advertising(DeviceAddress)
    /// Advertising could not be (re)started; the next connection or disconnection tries again.
    case advertisingFailed(AdvertisingError)
    /// A central connected; its link's stack is in place.
    case connected(RemoteCentral)
    /// A central connected while ``PeripheralHost/Options/maximumLinks`` were up, or its
    /// link's stack could not be built: it was disconnected at once.
    case refused(DeviceAddress, why: String)
    /// The link ended; the HCI reason.
    case disconnected(RemoteCentral, reason: HCIErrorCode)
    /// The ATT MTU of the link changed (an Exchange MTU we sent).
    case mtuChanged(RemoteCentral, mtu: UInt16)
    /// A pairing ended on the link (started by the central, or by our Security Request).
    /// `bondSaved` says whether its bond reached the store.
    case paired(RemoteCentral, PairingKeysSummary, bondSaved: Bool)
    case pairingFailed(RemoteCentral, PairingError)
    /// The link's encryption changed: after pairing, or a bonded central re-encrypting with
    /// its stored key (no pairing then). ``RemoteCentral/identity`` names the bond.
    case encryptionChanged(RemoteCentral, encrypted: Bool)
}
