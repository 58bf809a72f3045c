import ATT
import BluetoothCore
import GATT
import HCI
import L2CAP
import SMP
import Synchronization

/// A connected peer (`CBPeripheral`): its link, its ATT MTU, and its GATT database as
/// ``Service``, ``Characteristic`` and ``Descriptor`` objects. Made by
/// ``Central/connect(to:parameters:options:timeout:mtu:)``.
///
/// Wiring per connection: the link (our HCI ``Connection`` with an ``L2CAPBearer`` on the
/// ATT fixed channel and SMP, or the kernel's L2CAP ATT socket on `hci-raw:N`), an
/// ``ATTClient`` and a ``GATTClient``. When the link ends, every pending operation fails
/// at once with ``PeripheralError/gatt(_:)`` whose ``PeripheralError/disconnectReason`` is
/// the HCI reason, and notification streams end.
///
/// Security: a read, write or subscription the peer refuses for want of encryption or
/// authentication raises the link's security and is retried once, when the Central's
/// ``SecurityPolicy/pairsWhenRequired`` allows (the default); ``pair()`` pairs on demand.
public final class Peripheral: Sendable, CustomStringConvertible {
    public let central: Central
    let link: any PeripheralLink
    public let att: ATTClient
    public let gatt: GATTClient
    let objects = Lock<[Service]>([])
    let discovered = Lock<GATTDatabase?>(nil)
    private let changes: AsyncStream<[Service]>
    private let changesContinuation: AsyncStream<[Service]>.Continuation
    private let watcher = Lock<[Task<Void, Never>]>([])
    private let serviceChangesDropped = Atomic<Int>(0)

    init(central: Central, link: any PeripheralLink, procedureTimeout: Duration) {
        self.central = central
        self.link = link
        att = link.makeATTClient(server: nil)
        gatt = GATTClient(att: att, procedureTimeout: procedureTimeout)
        (changes, changesContinuation) = AsyncStream.makeStream(of: [Service].self, bufferingPolicy: .bufferingNewest(8))
        let updates = gatt.databaseChanges
        let continuation = changesContinuation
        // Service Changed: the GATT client has rediscovered; rebuild the objects, and
        // remember the new database. Ends with the bearer.
        let task = Task { [weak self] in
            for await change in updates {
                guard let self else { break }
                let services = self.adopt(change.database)
                if case .dropped = continuation.yield(services) { self.serviceChangesDropped.add(1, ordering: .relaxed) }
            }
            continuation.finish()
        }
        // No change can come once the link is gone: the stream ends with it.
        let ending = Task { [link] in
            _ = try? await link.disconnection()
            continuation.finish()
            task.cancel()
        }
        watcher.withLock { $0 = [task, ending] }
    }

    deinit {
        watcher.withLock { tasks in for task in tasks { task.cancel() } }
        changesContinuation.finish()
        link.close()
    }

    /// The peer's address on this link: a Bluetooth LE peripheral's identity on this
    /// stack, where CoreBluetooth would give an opaque UUID.
    public var identifier: DeviceAddress { link.peer }
    /// The identity the peer is known by: its bonded identity address when this address
    /// resolves to a stored bond (an RPA), else ``identifier``. The GATT cache is keyed by it.
    public var identity: DeviceAddress { central.identity(of: link.peer) }
    /// The HCI connection when BareBLE's own host made the link (timing, PHY, data length,
    /// encryption); nil beside the kernel (`hci-raw:N`), where the kernel owns it.
    public var connection: Connection? { link.connection }
    /// The GAP Device Name (0x2A00) once read (``Peripheral/readValue(for:)`` or an
    /// explore); nil before.
    public var name: String? {
        services.first { $0.uuid == GATTUUID.genericAccess }?.characteristic(GATTUUID.deviceName)?.value.map { GATTString.decode($0) }
    }

    public enum State: Sendable, Equatable {
        case connected
        /// With the Disconnection Complete reason (nil when the transport closed).
        case disconnected(HCIErrorCode?)
    }

    public var state: State { link.isConnected ? .connected : .disconnected(link.disconnectReason) }
    /// The ATT_MTU agreed at connection.
    public var mtu: UInt16 { att.mtu }
    /// Whether the link is encrypted now.
    public var isEncrypted: Bool { link.isEncrypted }

    public enum WriteType: Sendable, Hashable {
        /// Write Request (Prepare/Execute Write when longer than ATT_MTU - 3): confirmed.
        case withResponse
        /// Write Command: unconfirmed, at most ATT_MTU - 3 bytes.
        case withoutResponse
    }

    /// The longest value one write of `type` carries: 512 with a response (long writes),
    /// ATT_MTU - 3 without.
    public func maximumWriteValueLength(for type: WriteType) -> Int {
        type == .withResponse ? ATTConstants.maximumAttributeValueLength : Int(mtu) - 3
    }

    /// The database as the GATT client holds it (with its Database Hash); nil before
    /// ``discoverServices()``.
    public var database: GATTDatabase? { discovered.withLock { $0 } }

    /// The services of the database, in handle order; empty before ``discoverServices()``.
    public var services: [Service] { objects.withLock { $0 } }

    /// The database after each Service Changed indication, once the client rediscovered
    /// the affected services (CoreBluetooth's `didModifyServices`). Ends with the link. One
    /// stream per peripheral: iterate it from one task at a time.
    public var serviceChanges: AsyncStream<[Service]> { changes }

    /// Service changes ``serviceChanges`` dropped because its reader was 8 behind (the
    /// oldest go; each change carries the whole database, so the newest is enough).
    public var droppedServiceChanges: Int { serviceChangesDropped.load(ordering: .relaxed) }

    /// Ends the connection, after everything queued for it was handed to the controller,
    /// and waits for Disconnection Complete (0x13 is what the peer is told).
    public func disconnect() async throws(PeripheralError) {
        try await link.disconnect()
    }

    /// Waits for the link to end, by either side; the reason.
    public func disconnection() async throws(PeripheralError) -> HCIErrorCode {
        try await link.disconnection()
    }

    // MARK: Security

    /// Pairs now, as `CBPeripheral` does when a characteristic needs it, but on demand:
    /// our SMP with the Central's ``SecurityPolicy`` (the bond saved when it bonds), or
    /// beside the kernel, the kernel pairs to the level the policy asks for.
    @discardableResult
    public func pair() async throws(PeripheralError) -> SecurityOutcome {
        try await link.secure(explicit: true)
    }

    /// Runs `operation`; when the peer refuses it for want of security and the policy
    /// allows, raises the link's security (a stored bond's key, else pairing) and runs it
    /// once more. A second refusal is the caller's.
    func securing<Value: Sendable>(_ operation: () async throws(PeripheralError) -> Value) async throws(PeripheralError) -> Value {
        do {
            return try await operation()
        } catch where error.needsPairing && central.security.pairsWhenRequired {
            _ = try await link.secure(explicit: false)
            return try await operation()
        }
    }

    func exchangeMTU(_ mtu: UInt16) async throws(PeripheralError) {
        do { _ = try await att.exchangeMTU(clientRxMTU: mtu) } catch { throw .gatt(.att(error)) }
    }

    public var description: String { "peripheral \(identifier)" }
}
