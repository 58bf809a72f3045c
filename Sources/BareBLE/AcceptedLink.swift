import ATT
import BluetoothCore

/// A link a central made to our advertising, as ``PeripheralHost`` accepted it: on
/// BareBLE's own host (``HostLink``: our L2CAP and SMP) or through the kernel's ATT
/// listener on `hci-raw:N` (``KernelLink``: the kernel made the link and runs SMP).
protocol AcceptedLink: PeripheralLink {
    /// The HCI connection handle: names the link to its ATT server and the manager.
    var handle: UInt16 { get }
    /// The central's bonded identity when a bond of ours resolves it, else its address.
    var identity: DeviceAddress { get }
    /// The link's protection as the ATT server checks permissions against it.
    var linkSecurity: ATTLinkSecurity { get }
    /// Our own host's link, for what only it has (SMP, L2CAP signaling, link-layer
    /// procedures); nil when the kernel owns the link.
    var host: HostLink? { get }
}

extension HostLink: AcceptedLink {
    var handle: UInt16 { hci.handle }
    var host: HostLink? { self }
}
