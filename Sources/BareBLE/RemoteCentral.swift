import ATT
import BluetoothCore
import GATT
import HCI
import L2CAP
import SMP

/// A central connected to our advertising (`CBCentral`), as ``PeripheralHost`` accepted
/// it: its own ATT bearer and ``ATTClient`` (whose server side is the host's server
/// attachment), MTU and security. On BareBLE's own host it has its HCI ``Connection`` and
/// our SMP in the responder role; on `hci-raw:N` the kernel made the link, its ATT channel
/// is a kernel socket, and the kernel runs SMP.
public final class RemoteCentral: Sendable, CustomStringConvertible {
    let link: any AcceptedLink
    /// The ATT client of this link; PDUs the central sends as a client go to the server
    /// handler the host's attachment returned (or are counted in
    /// ``ATTClient/Statistics/ignoredPDUs`` without one).
    public let att: ATTClient
    /// Our ATT server on this link, when the host's attachment made one.
    public let server: ATTServer?
    private let report: @Sendable (PeripheralHostEvent) -> Void
    /// The keys of the latest pairing on this link: until its bond is saved (or when it does
    /// not bond) they are the only record of how the link's key was made.
    private let pairing = Lock<PairingKeys?>(nil)

    init(link: any AcceptedLink, att: ATTClient, server: ATTServer?, report: @escaping @Sendable (PeripheralHostEvent) -> Void) {
        self.link = link
        self.att = att
        self.server = server
        self.report = report
    }

    /// The central paired on this link (its bond, if any, is from this connection).
    var pairedOnThisLink: Bool { pairing.withLock { $0?.method != nil } }

    /// Encryption changed or a pairing ended (on the reader thread, before the central's
    /// next PDU): the server judges the next request by the new protection, and by the
    /// bonded identity once one is known.
    func securityChanged(pairedWith keys: PairingKeys?) {
        if let keys { pairing.withLock { $0 = keys } }
        server?.updateSecurity(linkSecurity)
        server?.updatePeer(link.identity)
    }

    /// The HCI connection; nil on `hci-raw:N`, where the kernel owns it.
    public var connection: Connection? { link.connection }
    public var handle: UInt16 { link.handle }
    /// The address the central connected from (an RPA when it uses privacy).
    public var address: DeviceAddress { link.peer }
    /// Its bonded identity when its address, or the RPA its IRK resolves, has a bond in the
    /// policy's store; else ``address``.
    public var identity: DeviceAddress { link.identity }
    public var mtu: UInt16 { att.mtu }
    public var isConnected: Bool { link.isConnected }
    public var isEncrypted: Bool { link.isEncrypted }
    public var disconnectReason: HCIErrorCode? { link.disconnectReason }
    /// Our SMP on this link; nil on `hci-raw:N`, where the kernel pairs.
    public var security: SecurityManager? { link.securityManager }
    /// The link's protection as the ATT server checks permissions against it.
    public var linkSecurity: ATTLinkSecurity { link.linkSecurity }

    public var description: String { "central \(address)" + (identity != address ? " (identity \(identity))" : "") + " on handle \(handle)" }

    /// Sends our own Exchange MTU (a peripheral may be a GATT client too) and returns the
    /// ATT_MTU in effect. The central's Exchange MTU request goes to the ATT server instead.
    @discardableResult
    public func exchangeMTU(_ mtu: UInt16 = ATTConstants.defaultClientMTU) async throws(PeripheralError) -> UInt16 {
        let agreed: UInt16
        do { agreed = try await att.exchangeMTU(clientRxMTU: mtu) } catch { throw .gatt(.att(error)) }
        report(.mtuChanged(self, mtu: agreed))
        return agreed
    }

    /// Sends SMP Security Request (Core Vol 3 Part H 3.6.7) and returns once the central has
    /// paired, or encrypted with the bond it holds (on `hci-raw:N` the kernel sends it when
    /// the socket's BT_SECURITY is raised to the policy's level). The central decides; one that ignores
    /// the request fails this after the SMP timeout (30 s) with
    /// ``PeripheralError/security(_:)``. Bonds are saved to the policy's store as for any
    /// pairing.
    public func requestSecurity() async throws(PeripheralError) -> SecurityOutcome {
        try await link.secure(explicit: true)
    }

    /// How a connection parameter request was carried out.
    public enum ParameterUpdate: Sendable, Equatable {
        /// The link layer's Connection Parameters Request procedure (both controllers have
        /// it; Core Vol 6 Part B 5.1.7), started with HCI LE Connection Update.
        case linkLayer(ConnectionTiming)
        /// L2CAP Connection Parameter Update Request (Core Vol 3 Part A 4.20): the central
        /// accepted and updated the connection to this timing.
        case l2cap(ConnectionTiming)
    }

    /// Asks the central for new connection timing: through the link layer when both
    /// controllers support the Connection Parameters Request procedure (our LE features,
    /// the central's as LE Read Remote Features reports them), else, or when the link layer
    /// refuses with Unsupported Remote Feature, with L2CAP's Connection Parameter Update
    /// Request, whose acceptance is followed by the central's LE Connection Update.
    ///
    /// Throws ``PeripheralError/signaling(_:)`` when the central rejects the L2CAP request
    /// (``L2CAPError/connectionParameterUpdateRejected``: it keeps its timing; ask for
    /// something it allows) or does not answer, and ``PeripheralError/connection(_:)`` when
    /// the update does not complete within `timeout`.
    @discardableResult
    public func requestConnectionParameters(
        _ request: ConnectionParameterUpdateRequest, timeout: Duration = .seconds(10)
    ) async throws(PeripheralError) -> ParameterUpdate {
        guard request.isValid else { throw .signaling(.invalidConnectionParameters(request)) }
        return try await link.requestConnectionParameters(request, timeout: timeout)
    }

    /// Ends the link after everything queued for it was handed to the controller.
    public func disconnect() async throws(PeripheralError) {
        try await link.disconnect()
    }

    /// Waits for the link to end, by either side; the HCI reason.
    public func disconnection() async throws(PeripheralError) -> HCIErrorCode {
        try await link.disconnection()
    }
}
