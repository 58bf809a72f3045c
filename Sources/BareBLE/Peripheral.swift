import ATT
import BluetoothCore
import GATT
import HCI
import L2CAP
import Synchronization

/// A connected peer (`CBPeripheral`): its link, its ATT MTU, and its GATT database as
/// ``Service``, ``Characteristic`` and ``Descriptor`` objects. Made by
/// ``Central/connect(to:parameters:options:timeout:mtu:)``.
///
/// Wiring per connection: the HCI ``Connection``, an ``L2CAPBearer`` on the ATT fixed
/// channel (which drops the link when ATT declares the bearer dead), an ``ATTClient`` and
/// a ``GATTClient``. When the link ends, every pending operation fails at once with
/// ``PeripheralError/gatt(_:)`` whose ``PeripheralError/disconnectReason`` is the HCI
/// reason, and notification streams end.
public final class Peripheral: Sendable, CustomStringConvertible {
    public let central: Central
    public let connection: Connection
    public let att: ATTClient
    public let gatt: GATTClient
    let objects = Mutex<[Service]>([])
    let discovered = Mutex<GATTDatabase?>(nil)
    private let changes: AsyncStream<[Service]>
    private let changesContinuation: AsyncStream<[Service]>.Continuation
    private let watcher = Mutex<[Task<Void, Never>]>([])

    init(central: Central, connection: Connection) {
        self.central = central
        self.connection = connection
        let bearer = L2CAPBearer(manager: central.channels, connection: connection.handle) { [connection] reason in
            try? await connection.disconnect(reason: reason)
        }
        att = ATTClient(bearer: bearer)
        gatt = GATTClient(att: att)
        (changes, changesContinuation) = AsyncStream.makeStream(of: [Service].self, bufferingPolicy: .bufferingNewest(8))
        let updates = gatt.databaseChanges
        let continuation = changesContinuation
        // Service Changed: the GATT client has rediscovered; rebuild the objects, and
        // remember the new database. Ends with the bearer.
        let task = Task { [weak self] in
            for await change in updates {
                guard let self else { break }
                let services = self.adopt(change.database)
                continuation.yield(services)
            }
            continuation.finish()
        }
        // No change can come once the link is gone: the stream ends with it.
        let ending = Task { [connection] in
            _ = try? await connection.disconnection()
            continuation.finish()
            task.cancel()
        }
        watcher.withLock { $0 = [task, ending] }
    }

    deinit {
        watcher.withLock { tasks in for task in tasks { task.cancel() } }
        changesContinuation.finish()
    }

    /// The peer's address: a Bluetooth LE peripheral's identity on this stack, where
    /// CoreBluetooth would give an opaque UUID.
    public var identifier: DeviceAddress { connection.peer }
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

    public var state: State { connection.isConnected ? .connected : .disconnected(connection.disconnectReason) }
    /// The ATT_MTU agreed at connection.
    public var mtu: UInt16 { att.mtu }
    public var timing: ConnectionTiming { connection.timing }
    public var phy: ConnectionPHY { connection.phy }
    public var dataLength: DataLength { connection.dataLength }

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

    /// Ends the connection, after everything queued for it was handed to the controller,
    /// and waits for Disconnection Complete (0x13 is what the peer is told).
    public func disconnect() async throws(PeripheralError) {
        // Write Commands only queue in L2CAP: let them reach the controller first.
        await central.channels.waitUntilSent(connection: connection.handle)
        do { try await connection.disconnect() } catch { throw .connection(error) }
    }

    /// Waits for the link to end, by either side; the reason.
    public func disconnection() async throws(PeripheralError) -> HCIErrorCode {
        do { return try await connection.disconnection() } catch { throw .connection(error) }
    }

    func exchangeMTU(_ mtu: UInt16) async throws(PeripheralError) {
        do { _ = try await att.exchangeMTU(clientRxMTU: mtu) } catch { throw .gatt(.att(error)) }
    }

    public var description: String { "peripheral \(identifier)" }
}
