import ATT
import BluetoothCore
import L2CAP
import SMP

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
    /// Our SMP on the link; nil when the kernel pairs.
    var securityManager: SecurityManager? { get }
    /// Asks the central for new connection timing (``RemoteCentral/requestConnectionParameters(_:timeout:)``).
    func requestConnectionParameters(
        _ request: ConnectionParameterUpdateRequest, timeout: Duration
    ) async throws(PeripheralError) -> RemoteCentral.ParameterUpdate
}

extension HostLink: AcceptedLink {
    var handle: UInt16 { hci.handle }
    var securityManager: SecurityManager? { security }
}
