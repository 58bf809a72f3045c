import ATT
import BluetoothCore
import HCI
import HCITransport
import L2CAP
import Synchronization

/// One controller in the central role: what CoreBluetooth's `CBCentralManager` is, with
/// async methods instead of delegate callbacks.
///
/// | CoreBluetooth | BareBLE |
/// | --- | --- |
/// | `CBCentralManager(delegate:queue:)` | ``Central/open(_:capture:)`` or ``Central/init(controller:)``, then ``powerOn()`` |
/// | `state`, `centralManagerDidUpdateState` | ``state``, ``stateUpdates()`` |
/// | `scanForPeripherals(withServices:)` | ``scan(matching:parameters:)`` (an AsyncSequence) |
/// | `connect(_:)`, `didConnect` | ``connect(to:parameters:options:timeout:)`` returns the ``Peripheral`` |
/// | `retrievePeripherals(withIdentifiers:)` | ``knownPeripherals`` (peers whose database is remembered) |
/// | `cancelPeripheralConnection(_:)` | ``Peripheral/disconnect()`` |
///
/// The Central owns the layers every connection shares: the ``HCIController``, L2CAP's
/// ``ChannelManager`` (created first, because it takes every ACL packet) and the
/// ``Connector``. Each ``Peripheral`` gets its own ATT bearer, ATT client and GATT client.
/// It also remembers each peer's GATT database with its Database Hash (``cache``), so a
/// reconnect to an unchanged peer skips discovery.
public final class Central: Sendable {
    public let controller: HCIController
    public let channels: ChannelManager
    public let connector: Connector
    public let scanner: Scanner
    /// Discovered databases per peer, kept for the Central's lifetime.
    public let cache: GATTCache

    /// Wraps a started controller (``HCIController/start()`` done, powered on or not).
    public init(controller: HCIController, cache: GATTCache = GATTCache()) {
        self.controller = controller
        channels = ChannelManager(controller: controller)
        connector = Connector(controller: controller)
        scanner = Scanner(controller: controller)
        self.cache = cache
    }

    /// Opens the transport `spec` names (recording it to `capture` when given) and starts
    /// the controller's driver; call ``powerOn()`` next.
    public static func open(_ spec: TransportSpec, capture: BTSnoopWriter? = nil) throws(TransportError) -> Central {
        Central(controller: try HCIController.open(spec, capture: capture))
    }

    /// Brings the controller up (Reset, event masks, buffer sizes, features).
    @discardableResult
    public func powerOn() async throws(HCIError) -> ControllerInfo {
        try await controller.powerOn()
    }

    /// Closes the transport: every connection ends and every pending operation fails.
    public func close() {
        controller.close()
    }

    /// The controller's state, as `CBManagerState` tells it.
    public var state: ControllerStatus { controller.currentStatus }

    /// Each state change, from now on, until the transport closes.
    public func stateUpdates() -> AsyncStream<ControllerStatus> { controller.statusUpdates() }

    // MARK: Connecting

    /// Connects to `peer` as central and returns its ``Peripheral`` with the ATT MTU
    /// exchanged (517 offered). The GATT database is not discovered yet: call
    /// ``Peripheral/discoverServices()``.
    ///
    /// Pairing hook: once SMP exists, a bonded peer's link will be encrypted here, before
    /// the MTU exchange, so characteristics that need encryption read on the first try.
    public func connect(
        to peer: DeviceAddress,
        parameters: ConnectionParameters = .default,
        options: ConnectionOptions = .none,
        timeout: Duration = .seconds(10),
        mtu: UInt16 = ATTConstants.defaultClientMTU
    ) async throws(PeripheralError) -> Peripheral {
        let connection: Connection
        do {
            connection = try await connector.connect(to: peer, parameters: parameters, options: options, timeout: timeout)
        } catch {
            throw .connection(error)
        }
        let peripheral = Peripheral(central: self, connection: connection)
        do {
            try await peripheral.exchangeMTU(mtu)
        } catch {
            try? await connection.disconnect()
            throw error
        }
        return peripheral
    }

    /// The peers whose database this Central remembers, as `retrievePeripherals` would
    /// find them: connect to one and ``Peripheral/discoverServices()`` costs no discovery
    /// when its Database Hash is unchanged.
    public var knownPeripherals: [DeviceAddress] { cache.peers }
}
