import ATT
import Bonding
import BluetoothCore
import GATT
import HCI
import HCITransport
import KernelHost
import L2CAP
import SMP

/// One controller in the central role: what CoreBluetooth's `CBCentralManager` is, with
/// async methods instead of delegate callbacks.
///
/// | CoreBluetooth | BareBLE |
/// | --- | --- |
/// | `CBCentralManager(delegate:queue:)` | ``Central/open(_:capture:security:)`` or ``Central/init(controller:cache:security:)``, then ``powerOn()`` |
/// | `state`, `centralManagerDidUpdateState` | ``state``, ``stateUpdates()`` |
/// | `scanForPeripherals(withServices:)` | ``scan(matching:parameters:)`` (an AsyncSequence) |
/// | `connect(_:)`, `didConnect` | ``connect(to:parameters:options:timeout:mtu:)`` returns the ``Peripheral`` |
/// | `retrievePeripherals(withIdentifiers:)` | ``knownPeripherals`` (peers whose database is remembered) |
/// | `cancelPeripheralConnection(_:)` | ``Peripheral/disconnect()`` |
/// | pairing when a characteristic needs it | ``security`` (``SecurityPolicy``), ``Peripheral/pair()`` |
///
/// Two ways to reach a peer, chosen by the transport (one `Host`):
/// - BareBLE's own host (user channel `hci:N`, H4, the virtual radio): the Central owns a
///   ``ControllerHost``, L2CAP's ``ChannelManager`` and the ``Connector`` built in the
///   order they need; SMP runs per link, bonds go to ``SecurityPolicy/bonds``.
/// - Beside the kernel (`hci-raw:N`, module KernelHost): scanning stays ours, but
///   connections are the kernel's: each ``Peripheral`` talks ATT over the kernel's L2CAP
///   LE socket, and the kernel pairs when the link's security is raised. ``channels`` and
///   ``connector`` are nil, so nothing of ours answers for the kernel's links.
///
/// The peripheral role on the same controller (advertise, accept centrals) is
/// ``PeripheralHost``, made from a Central on BareBLE's own host.
///
/// Either way each ``Peripheral`` gets its own ATT client and GATT client, and the Central
/// remembers each peer's GATT database with its Database Hash (``cache``), so a reconnect
/// to an unchanged peer skips discovery.
public final class Central: Sendable {
    public let controller: HCIController
    /// Who makes this Central's links.
    let host: Host
    public let scanner: Scanner
    /// Discovered databases per peer (by identity when bonded), kept for the Central's lifetime.
    public let cache: GATTCache
    private let policy: Lock<SecurityPolicy>
    /// Repeated-attempts backoff shared by every link of this Central.
    let attempts = RepeatedAttemptsRecord()

    /// Our L2CAP; nil beside the kernel (`hci-raw:N`).
    public var channels: ChannelManager? {
        if case let .controller(stack) = host { stack.channels } else { nil }
    }

    /// Our connection maker; nil beside the kernel (`hci-raw:N`).
    public var connector: Connector? {
        if case let .controller(stack) = host { stack.connector } else { nil }
    }

    /// The kernel's adapter index when connections go through the kernel (`hci-raw:N`).
    public var kernelAdapter: Int? {
        if case let .kernel(adapter) = host { adapter.index } else { nil }
    }

    /// Wraps a started controller (``HCIController/start()`` done, powered on or not).
    public init(controller: HCIController, cache: GATTCache = GATTCache(), security: SecurityPolicy = SecurityPolicy()) {
        self.controller = controller
        host = Host(controller: controller)
        scanner = Scanner(controller: controller)
        self.cache = cache
        policy = Lock(security)
    }

    /// How links are secured; connections made from now on use it.
    public var security: SecurityPolicy {
        get { policy.withLock { $0 } }
        set { policy.withLock { $0 = newValue } }
    }

    /// Opens the transport `spec` names (recording it to `capture` when given) and starts
    /// the controller's driver; call ``powerOn()`` next.
    public static func open(_ spec: TransportSpec, capture: BTSnoopWriter? = nil, security: SecurityPolicy = SecurityPolicy()) throws(TransportError) -> Central {
        Central(controller: try HCIController.open(spec, capture: capture), security: security)
    }

    /// Brings the controller up (Reset, event masks, buffer sizes, features; beside the
    /// kernel only what may be read without disturbing it).
    @discardableResult
    public func powerOn() async throws(HCIError) -> ControllerInfo {
        try await controller.powerOn()
    }

    /// Closes the transport: every connection ends and every pending operation fails.
    public func close() {
        if case let .kernel(adapter) = host { adapter.close() }
        controller.close()
    }

    /// Beside the kernel with a bond store: the store loaded into the kernel and the
    /// kernel's new keys kept in it, attached the first time a link or a ``PeripheralHost``
    /// needs the kernel (the store of the policy at that time). Nil without a store, or
    /// when the management interface refused (``kernelBondsProblem``):
    /// links still work then, with the kernel's keys in its memory only.
    func kernelBonds(_ adapter: KernelAdapter) -> KernelBonds? {
        guard let store = security.bonds else { return nil }
        return adapter.bonds(keptIn: store)
    }

    /// What became of the keys the kernel reported since the bond store was attached
    /// (hci-raw:N); nil before, or without a store.
    public var kernelBondCounters: KernelBondCounters? {
        if case let .kernel(adapter) = host { adapter.bondCounters } else { nil }
    }

    /// Why the kernel's keys are not kept in the bond store (hci-raw:N), if they are not.
    public var kernelBondsProblem: String? {
        if case let .kernel(adapter) = host { adapter.bondsProblem } else { nil }
    }

    /// The controller's state, as `CBManagerState` tells it.
    public var state: ControllerStatus { controller.currentStatus }

    /// Each state change, from now on, until the transport closes.
    public func stateUpdates() -> AsyncStream<ControllerStatus> { controller.statusUpdates() }

    // MARK: Connecting

    /// Connects to `peer` as central and returns its ``Peripheral`` with the ATT MTU
    /// exchanged (517 offered, or the kernel socket's limit). A peer with a stored bond
    /// gets its link encrypted first (unless ``SecurityPolicy/encryptsBondedPeersAtConnect``
    /// is off), so characteristics that need encryption read on the first try; a bond the
    /// peer lost fails here with
    /// ``PeripheralError/security(_:)`` (re-encryption failed), never as a plaintext link.
    /// The GATT database is not discovered yet: call ``Peripheral/discoverServices()``.
    ///
    /// Beside the kernel, `parameters` and `options` are the kernel's to choose and are
    /// not used; `timeout` bounds the socket's connect. `procedureTimeout` bounds each GATT
    /// procedure as a whole (a discovery, a long read; ``GATTClient/procedureTimeout``):
    /// longer for a large database behind a long connection interval.
    public func connect(
        to peer: DeviceAddress,
        parameters: ConnectionParameters = .default,
        options: ConnectionOptions = .none,
        timeout: Duration = .seconds(10),
        mtu: UInt16 = ATTConstants.defaultClientMTU,
        procedureTimeout: Duration = GATTClient.defaultProcedureTimeout
    ) async throws(PeripheralError) -> Peripheral {
        let link: any PeripheralLink
        let security = self.security
        switch host {
        case let .kernel(adapter):
            link = try await KernelLink.connect(to: peer, adapter: adapter.index, security: security, bonds: kernelBonds(adapter), timeout: timeout)
        case let .controller(stack):
            let connection: Connection
            do {
                connection = try await stack.connector.connect(to: peer, parameters: parameters, options: options, timeout: timeout)
            } catch {
                throw .connection(error)
            }
            do {
                let ours = try HostLink(connection: connection, channels: stack.channels, policy: security, attempts: attempts)
                if security.encryptsBondedPeersAtConnect { _ = try await ours.encryptWithBond() }
                link = ours
            } catch {
                try? await connection.disconnect()
                throw error
            }
        }
        let peripheral = Peripheral(central: self, link: link, procedureTimeout: procedureTimeout)
        do {
            try await peripheral.exchangeMTU(mtu)
        } catch {
            try? await peripheral.disconnect()
            throw error
        }
        return peripheral
    }

    /// The identity a peer is known by: the bonded identity its address resolves to (an
    /// RPA with a stored IRK), else the address itself.
    func identity(of peer: DeviceAddress) -> DeviceAddress {
        security.bonds?.bond(for: peer)?.peer ?? peer
    }

    /// The peers whose database this Central remembers, as `retrievePeripherals` would
    /// find them: connect to one and ``Peripheral/discoverServices()`` costs no discovery
    /// when its Database Hash is unchanged.
    public var knownPeripherals: [DeviceAddress] { cache.peers }
}
