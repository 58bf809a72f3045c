import ArgumentParser
import BareBLE
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// What every subcommand that talks to one device shares: the controller, the device's
/// address, and the deadlines. ``connect(_:)`` opens, connects, runs the body and always
/// disconnects and closes.
struct PeripheralOptions: ParsableArguments {
    @OptionGroup var transport: TransportOptions
    @OptionGroup var pairing: PairingOptions

    @Argument(help: "The device: AA:BB:CC:DD:EE:FF[/public|/random]; without the suffix the type is found by scanning.")
    var address: String

    @Option(help: "Give up connecting after this many seconds.")
    var timeout: Double = 10

    @Option(name: .customLong("scan-timeout"), help: "Seconds to scan for the address type when ADDRESS has no /public or /random.")
    var scanTimeout: Double = 5

    @Option(name: .customLong("gatt-cache"), help: "Keep each device's GATT database in this directory, so the next run reads the Database Hash instead of discovering again. Default: $BAREBLE_GATT_CACHE, else none.")
    var gattCache: String?

    func validate() throws {
        guard DeviceAddress(address) != nil else {
            throw ValidationError("\(address) is not an address: use AA:BB:CC:DD:EE:FF, optionally /public or /random")
        }
        for (name, value) in [("--timeout", timeout), ("--scan-timeout", scanTimeout)] {
            guard value.isFinite, value > 0, value < 1e6 else { throw ValidationError("\(name) \(value) is not a positive number of seconds") }
        }
    }

    static func duration(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// Opens the controller, powers it on and returns the Central, with the bond store of
    /// the controller's address. `tap` sees every packet (see ``TransportOptions``).
    func openCentral(tap: TraceTap? = nil) async throws -> Central {
        let directory = gattCache ?? getenv("BAREBLE_GATT_CACHE").map { String(cString: $0) }
        let controller = try transport.openController(tap: tap)
        do {
            let info: ControllerInfo
            do { info = try await controller.powerOn() } catch { throw ToolError(error.description) }
            let policy = try pairing.policy(address: info.address)
            return Central(controller: controller, cache: GATTCache(directory: directory), security: policy)
        } catch {
            controller.close()
            throw error
        }
    }

    /// The address as given, or with the type learnt from its advertisements.
    func resolve(on central: Central) async throws -> DeviceAddress {
        guard let given = DeviceAddress(address) else { throw ToolError("\(address) is not an address") }
        if address.contains("/") { return given }
        let found: DeviceAddress?
        do {
            found = try await central.resolve(given.address, timeout: Self.duration(scanTimeout))
        } catch {
            throw ToolError("cannot scan for \(address): \(error)")
        }
        guard let found else {
            throw ToolError("\(address) was not heard within \(scanTimeout) s: is it advertising and in range? Give /public or /random to connect without scanning")
        }
        return found
    }

    /// Connects, runs `body`, then disconnects (also after a failure) and closes.
    /// `encryptingWithBond: false` leaves a bonded peer's link unencrypted at connect (for
    /// `pair`, which replaces the bond).
    func connect<T>(
        options: ConnectionOptions = .none,
        encryptingWithBond: Bool = true,
        tap: TraceTap? = nil,
        _ body: (Central, Peripheral) async throws -> T
    ) async throws -> T {
        let central = try await openCentral(tap: tap)
        defer { central.close() }
        central.security.encryptsBondedPeersAtConnect = encryptingWithBond
        let peer = try await resolve(on: central)
        let peripheral: Peripheral
        do {
            peripheral = try await central.connect(to: peer, options: options, timeout: Self.duration(timeout))
        } catch {
            throw ToolError(userMessage(error))
        }
        if let problem = central.kernelBondsProblem { printError("warning: \(problem)") }
        let result: Result<T, any Error>
        do { result = .success(try await body(central, peripheral)) } catch { result = .failure(error) }
        try? await peripheral.disconnect()
        return try result.get()
    }
}

/// What CHAR named in the discovered database.
enum SelectedAttribute {
    case characteristic(Characteristic)
    case descriptor(Descriptor)

    init(_ selector: AttributeSelector, in peripheral: Peripheral, address: String) throws {
        switch selector {
        case .uuid(let uuid):
            if let found = peripheral.characteristic(uuid) {
                self = .characteristic(found)
                return
            }
        case .handle(let handle):
            if let found = peripheral.characteristic(valueHandle: handle) {
                self = .characteristic(found)
                return
            }
            if let found = peripheral.descriptor(handle: handle) {
                self = .descriptor(found)
                return
            }
        }
        throw ToolError("\(address) has no characteristic \(selector): `bareble-central explore \(address)` lists what it has")
    }

    var uuid: BluetoothUUID {
        switch self {
        case .characteristic(let characteristic): characteristic.uuid
        case .descriptor(let descriptor): descriptor.uuid
        }
    }
}
