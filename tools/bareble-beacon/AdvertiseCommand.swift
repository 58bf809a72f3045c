import ArgumentParser
import Beacon
import BluetoothCore
import Glibc
import HCI
import ToolSupport

/// `bareble-beacon advertise FORMAT`: be a beacon until Ctrl-C or --duration. Beacons are
/// broadcasts: non-connectable legacy PDUs (ADV_NONCONN_IND), which every scanner hears.
struct AdvertiseBeacon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advertise",
        abstract: "Transmit an iBeacon or an Eddystone frame (non-connectable, legacy PDUs).",
        subcommands: [IBeaconAdvertise.self, EddystoneUIDAdvertise.self, EddystoneURLAdvertise.self, EddystoneTLMAdvertise.self]
    )
}

// Powers and temperatures are negative numbers, which ArgumentParser would otherwise take
// for flags: those options parse their value unconditionally so `--power -59` works.

/// What every advertise subcommand shares, and the advertising itself.
struct BeaconAdvertising: ParsableArguments {
    @OptionGroup var options: TransportOptions

    @Option(help: "Advertising interval in milliseconds (20 ... 10240; 100 is the usual beacon rate).")
    var interval = 100.0

    @Option(help: "Stop after this many seconds instead of waiting for Ctrl-C.")
    var duration: Double?

    func validate() throws {
        guard interval.isFinite, (20...10240).contains(interval) else {
            throw ValidationError("--interval \(interval) is outside 20...10240 ms (legacy advertising)")
        }
        if let duration, !(duration.isFinite && duration > 0 && duration < 1e7) {
            throw ValidationError("--duration \(duration) is not a positive number of seconds")
        }
    }

    /// Advertises `data` until stopped; `what` names the frame in the line printed.
    func advertise(_ what: String, build: () throws(BeaconEncodingError) -> AdvertisingData) async throws {
        let data: AdvertisingData
        do {
            data = try build()
        } catch {
            // The Beacon module's builder errors already say what to change.
            throw ToolError(error.description)
        }
        let parameters = AdvertisingParameters(
            kind: .nonConnectableUndirected,
            interval: .microseconds(Int64((interval * 1000).rounded())),
            pduFormat: .legacy,
            ownAddress: .public,
            txPower: nil
        )
        let controller = try await options.openPoweredController()
        defer { controller.close() }
        let set: AdvertisingSet
        do {
            set = try await Advertiser(controller: controller).start(parameters, data: data, scanResponse: nil)
        } catch {
            throw ToolError(error.description)
        }
        writeOut("advertising \(what) as \(set.address.address), non-connectable, interval \(fixedPoint(interval, places: 0)) ms, data \(Hex.string(data.bytes)), \(duration.map { "for \(fixedPoint($0, places: 1)) s" } ?? "until Ctrl-C")\n")
        await StopRequest.wait(upTo: duration)
        do {
            try await set.stop()
        } catch {
            throw ToolError("could not stop advertising: \(error)")
        }
    }
}

struct IBeaconAdvertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ibeacon", abstract: "Apple's iBeacon: proximity UUID, major, minor, measured power.")

    @OptionGroup var advertising: BeaconAdvertising

    @Option(help: "Proximity UUID, 32 hex digits (dashes optional).")
    var uuid: String

    @Option(help: "Major, 0...65535.")
    var major: Int

    @Option(help: "Minor, 0...65535.")
    var minor: Int

    @Option(parsing: .unconditional, help: "Measured power: the RSSI a receiver sees at 1 m, dBm (see `bareble-beacon calibrate`).")
    var power = -59

    func run() async throws {
        try await advertising.advertise("iBeacon") { () throws(BeaconEncodingError) in
            try IBeacon(proximityUUID: uuid, major: major, minor: minor, measuredPower: power).advertisingData()
        }
    }
}

struct EddystoneUIDAdvertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "eddystone-uid", abstract: "Eddystone-UID: a 10-byte namespace and a 6-byte instance.")

    @OptionGroup var advertising: BeaconAdvertising

    @Option(help: "Namespace, 20 hex digits.")
    var namespace: String

    @Option(help: "Instance, 12 hex digits.")
    var instance: String

    @Option(parsing: .unconditional, help: "Calibrated TX power at 0 m, dBm (about 41 dB above the RSSI at 1 m).")
    var power = -18

    func run() async throws {
        guard let namespaceBytes = Hex.bytes(namespace) else { throw ToolError("--namespace \(namespace) is not hex: give 20 hex digits") }
        guard let instanceBytes = Hex.bytes(instance) else { throw ToolError("--instance \(instance) is not hex: give 12 hex digits") }
        try await advertising.advertise("Eddystone-UID") { () throws(BeaconEncodingError) in
            try EddystoneFrame.uid(EddystoneUID(txPower: power, namespace: namespaceBytes, instance: instanceBytes)).advertisingData()
        }
    }
}

struct EddystoneURLAdvertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "eddystone-url", abstract: "Eddystone-URL: a compressed URL (at most 17 bytes after the scheme).")

    @OptionGroup var advertising: BeaconAdvertising

    @Option(help: "The URL, http:// or https:// (www. is folded into the scheme).")
    var url: String

    @Option(parsing: .unconditional, help: "Calibrated TX power at 0 m, dBm.")
    var power = -18

    func run() async throws {
        try await advertising.advertise("Eddystone-URL") { () throws(BeaconEncodingError) in
            try EddystoneFrame.url(EddystoneURL(txPower: power, url: url)).advertisingData()
        }
    }
}

struct EddystoneTLMAdvertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eddystone-tlm",
        abstract: "Eddystone-TLM (plain): battery and temperature, as a fixed frame.",
        discussion: "The PDU count and time since power-on are sent as 0: the controller does the transmitting and does not tell the host how many PDUs went out."
    )

    @OptionGroup var advertising: BeaconAdvertising

    @Option(name: .customLong("battery-mv"), help: "Battery voltage in mV (0: mains powered or not measured).")
    var batteryMillivolts = 0

    @Option(parsing: .unconditional, help: "Temperature in °C (left out: not supported, 0x8000).")
    var temperature: Double?

    func validate() throws {
        guard (0...0xFFFF).contains(batteryMillivolts) else { throw ValidationError("--battery-mv \(batteryMillivolts) is outside 0...65535") }
        if let temperature, !(temperature.isFinite && abs(temperature) < 128) {
            throw ValidationError("--temperature \(temperature) is outside -127.99...127.99 °C (8.8 fixed point)")
        }
    }

    func run() async throws {
        let telemetry = EddystoneTLM.Telemetry(batteryVoltage: UInt16(batteryMillivolts), temperature: temperature, advertisingPDUCount: 0, timeSincePowerOn: 0)
        try await advertising.advertise("Eddystone-TLM") { () throws(BeaconEncodingError) in
            try EddystoneFrame.tlm(.plain(telemetry)).advertisingData()
        }
    }
}
