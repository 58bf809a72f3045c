import ArgumentParser
import ATT
import BareBLE
import BluetoothCore
import GATT
import Glibc
import HCI
import ToolSupport

/// `bareble-peripheral serve`: advertise and serve a database until Ctrl-C or --duration,
/// reporting what centrals do and taking commands on stdin.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Advertise and serve a GATT database; one JSON line per event on stdout (a readable log on a terminal).",
        discussion: """
            The database is a --profile (simulated values) or a --database file, as \
            `bareble-central explore --json` prints it. Commands on stdin, one per line: \
            `notify CHAR HEX`, `indicate CHAR HEX` (send to the centrals subscribed that way), \
            `set CHAR HEX` (change the stored value, notifying subscribers), `disconnect` (every \
            central). CHAR is a UUID or a handle. Events: connected, mtu, read, write, \
            subscribed, unsubscribed, paired, encrypted, disconnected; command results as \
            "sent" or "error". On hci-raw:N the kernel makes the links and pairs (power the \
            adapter on with `bareble-central adapters --up N` so it can): we advertise on the \
            raw channel and serve through the kernel's ATT listening socket.
            """
    )

    @OptionGroup var transport: TransportOptions
    @OptionGroup var pairing: PairingOptions

    @Option(help: "Serve a standard service with simulated values: heart-rate, battery or device-information.")
    var profile: Profile?

    @Option(help: "Serve the database in this file (what `bareble-central explore --json` prints).")
    var database: String?

    @Option(help: "The local name to advertise, also the GAP Device Name (default: the file's Device Name, else BareBLE).")
    var name: String?

    @Option(name: .customLong("service"), help: "A service UUID to advertise; repeatable. Default: the profile's service.")
    var advertisedServices: [String] = []

    @Option(name: .customLong("require-encryption"), parsing: .upToNextOption, help: "Characteristic UUIDs whose reads, writes and subscriptions need an encrypted link (Insufficient Authentication before pairing; no notification or indication goes out unencrypted).")
    var requireEncryption: [String] = []

    @Option(help: "Stop after this many seconds instead of waiting for Ctrl-C.")
    var duration: Double?

    func validate() throws {
        guard (profile == nil) != (database == nil) else { throw ValidationError("give one of --profile and --database") }
        for text in advertisedServices + requireEncryption where BluetoothUUID(text) == nil {
            throw ValidationError("\(text) is not a UUID: give 180D or the dashed 128-bit form")
        }
        if let duration, !(duration.isFinite && duration > 0 && duration < 1e7) {
            throw ValidationError("--duration \(duration) is not a positive number of seconds")
        }
    }

    func run() async throws {
        let file = try database.map { try DatabaseFile(path: $0) }
        var services = file?.services ?? profile.map { [$0.service] } ?? []
        let protected = Set(requireEncryption.compactMap(BluetoothUUID.init))
        for index in services.indices {
            for (position, characteristic) in services[index].characteristics.enumerated() where protected.contains(characteristic.uuid) {
                services[index].characteristics[position].requireEncryption()
            }
        }
        let localName = name ?? file?.deviceName ?? "BareBLE"
        let advertised = advertisedServices.isEmpty ? (profile.map { [$0.service.uuid] } ?? []) : advertisedServices.compactMap(BluetoothUUID.init)

        let controller = try transport.openController()
        defer { controller.close() }
        let info: ControllerInfo
        do { info = try await controller.powerOn() } catch { throw ToolError(error.description) }
        let policy = try pairing.policy(address: info.address)
        let central = Central(controller: controller, cache: GATTCache(directory: nil), security: policy)
        defer { central.close() }

        var data = AdvertisingDataBuilder()
        data.flags(.generalDiscoverableLEOnly)
        if !advertised.isEmpty { data.serviceUUIDs(advertised) }
        var scanResponse = AdvertisingDataBuilder()
        scanResponse.localName(localName)
        let manager: PeripheralManager
        do {
            manager = try PeripheralManager(
                central: central,
                advertising: PeripheralHost.Options(
                    data: try data.build(), scanResponse: try scanResponse.build(), maximumLinks: 4),
                services: services,
                gatt: GATTServerConfiguration(deviceName: localName, appearance: file?.appearance ?? 0))
        } catch let error as PeripheralManagerError {
            throw ToolError(error.description)
        } catch {
            throw ToolError("the advertising data does not fit: \(error): use a shorter --name or fewer --service")
        }
        let output = EventOutput(json: isatty(1) == 0)
        let events = manager.events()
        let reporter = Task { for await event in events { output.write(event) } }
        do {
            try await manager.startAdvertising()
        } catch {
            throw ToolError("cannot advertise: \(error)")
        }
        output.line(["event": .string("advertising"), "name": .string(localName), "address": .string(info.address.description)],
                    text: "advertising as \(localName) from \(info.address); serving \(manager.database.services.count) services")
        let simulation = Task { await profile?.simulate(manager) }
        let commands = Task { await StdinCommands(manager: manager, output: output).run() }
        await StopRequest.wait(upTo: duration)
        simulation.cancel()
        commands.cancel()
        await manager.stopAdvertising()
        for link in manager.centrals { try? await link.disconnect() }
        reporter.cancel()
    }
}

extension GATTDatabase.Characteristic {
    /// `--require-encryption`: reading, writing (a signed write still passes unencrypted,
    /// with the bond's CSRK) and subscribing need an encrypted link. Subscribing is the
    /// CCCD's write: declared here for a value that cannot be read (a notify-only one),
    /// whose added CCCD would otherwise be open.
    mutating func requireEncryption() {
        let encrypted = ATTPermissions.Access(protection: .encryption)
        permissions = ATTPermissions(
            read: properties.contains(.read) ? encrypted : nil,
            write: properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites]) ? nil : encrypted)
        guard !properties.isDisjoint(with: [.notify, .indicate]) else { return }
        let subscription = ATTPermissions(read: .open, write: encrypted)
        if let cccd = descriptors.firstIndex(where: { $0.uuid == GATTUUID.clientCharacteristicConfiguration }) {
            descriptors[cccd].permissions = subscription
        } else {
            descriptors.append(GATTDatabase.Descriptor(uuid: GATTUUID.clientCharacteristicConfiguration, permissions: subscription))
        }
    }
}
