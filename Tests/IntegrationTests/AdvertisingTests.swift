import BluetoothCore
import Foundation
import HCI
import HCITransport
import Testing
import TestSupport

/// Our advertising, heard by an independent scanner: Bumble's scanner peer on the virtual
/// radio logs the exact bytes and PDU kind of everything it hears.
@Suite(.serialized) struct Advertising {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--scanner"]) }

    struct Connection {
        let controller: HCIController
        let info: ControllerInfo
        let advertiser: Advertiser
    }

    func connect(_ harness: RadioHarness, capture: String? = nil) async throws -> Connection {
        var transport: any HCITransport = try TCPTransport.connect(host: "127.0.0.1", port: harness.radio.tcpPort)
        if let capture { transport = CapturingTransport(transport, writer: try BTSnoopWriter(path: capture, datalink: .h4)) }
        let controller = HCIController(transport: transport)
        try controller.start()
        let info = try await controller.powerOn()
        return Connection(controller: controller, info: info, advertiser: Advertiser(controller: controller))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The scanner's first report of `address` carrying exactly `data`.
    func heard(_ harness: RadioHarness, _ address: BluetoothAddress, data: [UInt8]) async throws -> [String: Any] {
        let expected = Self.hex(data)
        return try await harness.waitForEvent("heard", timeout: .seconds(10)) { event in
            event["address"] as? String == address.description && event["data"] as? String == expected
        }
    }

    let flagsAndName: [UInt8] = [0x02, 0x01, 0x06, 0x08, 0x09] + Array("BareBLE".utf8)

    @Test func legacyConnectableWithScanResponse() async throws {
        let harness = try Self.harness.get()
        let connection = try await connect(harness)
        defer { connection.controller.close() }
        let response: [UInt8] = [0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02]
        let set = try await connection.advertiser.start(
            .init(kind: .connectableUndirected, interval: .milliseconds(20), pduFormat: .legacy),
            data: AdvertisingData(flagsAndName), scanResponse: AdvertisingData(response))
        #expect(set.usesLegacyPDUs)
        let event = try await heard(harness, connection.info.address, data: flagsAndName)
        #expect(event["address_type"] as? String == "public")
        #expect(event["connectable"] as? Bool == true)
        #expect(event["scannable"] as? Bool == true)
        #expect(event["legacy"] as? Bool == true)
        #expect(event["scan_response"] as? String == Self.hex(response))
        try await set.stop()
    }

    @Test func legacyNonConnectableFromARandomStaticAddress() async throws {
        let harness = try Self.harness.get()
        let connection = try await connect(harness)
        defer { connection.controller.close() }
        // An iBeacon-shaped payload: what old receivers must hear as ADV_NONCONN_IND.
        let beacon: [UInt8] = [0x02, 0x01, 0x04, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + (0..<21).map { UInt8($0) }
        let set = try await connection.advertiser.start(
            .init(kind: .nonConnectableUndirected, interval: .milliseconds(20), ownAddress: .randomStatic),
            data: AdvertisingData(beacon))
        #expect(set.address.kind == .randomStatic)
        let event = try await heard(harness, connection.advertiser.randomStaticAddress, data: beacon)
        #expect(event["address_type"] as? String == "random")
        #expect(event["connectable"] as? Bool == false)
        #expect(event["scannable"] as? Bool == false)
        #expect(event["legacy"] as? Bool == true)
        #expect(event["scan_response"] is NSNull)
        try await set.stop()
    }

    @Test func extendedConnectable() async throws {
        let harness = try Self.harness.get()
        let connection = try await connect(harness)
        defer { connection.controller.close() }
        #expect(connection.info.supports(LESetExtendedAdvertisingParameters.self))
        let data = flagsAndName + [0x11, 0x07] + (0..<16).map { UInt8(0xA0 + $0) }
        let set = try await connection.advertiser.start(
            .init(kind: .connectableUndirected, interval: .milliseconds(20), pduFormat: .extended, txPower: 4),
            data: AdvertisingData(data))
        #expect(!set.usesLegacyPDUs && set.handle == 0 && set.selectedTxPower != nil)
        let event = try await heard(harness, connection.info.address, data: data)
        #expect(event["connectable"] as? Bool == true)
        #expect(event["scannable"] as? Bool == false)
        #expect(event["legacy"] as? Bool == false)
        #expect(event["scan_response"] is NSNull)
        try await set.stop()
    }

    @Test func extendedNonConnectableWithLongDataAndACleanCapture() async throws {
        let harness = try Self.harness.get()
        let capture = TestScratch.root + "/advertising.btsnoop"
        let connection = try await connect(harness, capture: capture)
        // 300 bytes as AD structures: two LE Set Extended Advertising Data fragments, and
        // more than one extended report at the scanner. The first structure fills the first
        // fragment exactly, because tshark dissects each fragment's AD structures on their
        // own and calls a structure that crosses fragments malformed.
        let long: [UInt8] = [0xFA, 0xFF] + (0..<249).map { UInt8(truncatingIfNeeded: $0) } + [0x30, 0xFF] + [UInt8](repeating: 0x5A, count: 47)
        #expect(long.count == 300)
        let set = try await connection.advertiser.start(
            .init(kind: .nonConnectableUndirected, interval: .milliseconds(20)), data: AdvertisingData(long))
        #expect(!set.usesLegacyPDUs)
        // A second set at once, with legacy PDUs, from the same controller.
        let second = try await connection.advertiser.start(
            .init(kind: .nonConnectableUndirected, interval: .milliseconds(20), ownAddress: .randomStatic), data: AdvertisingData(flagsAndName))
        #expect(second.handle == 1)
        let event = try await heard(harness, connection.info.address, data: long)
        #expect(event["connectable"] as? Bool == false)
        #expect(event["scannable"] as? Bool == false)
        #expect(event["legacy"] as? Bool == false)
        _ = try await heard(harness, connection.advertiser.randomStaticAddress, data: flagsAndName)
        try await set.stop()
        try await second.stop()
        #expect(set.state == .stopped)
        #expect(connection.controller.statistics.malformedEvents == 0)
        connection.controller.close()

        let report = try await Tshark.check(capture)
        #expect(report.packets > 20)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
        let decoded = try Tshark.verbose(capture)
        #expect(decoded.contains("LE Set Extended Advertising Data"))
    }

    @Test func theControllerEndsASetAfterItsDuration() async throws {
        let harness = try Self.harness.get()
        let connection = try await connect(harness)
        defer { connection.controller.close() }
        let set = try await connection.advertiser.start(
            .init(kind: .nonConnectableUndirected, interval: .milliseconds(20), duration: .milliseconds(100)),
            data: AdvertisingData(flagsAndName))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while set.state == .advertising, clock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(set.state == .ended(.controllerStopped(.advertisingTimeout)))
        try await set.stop()
    }

    @Test func theCentralToolAdvertisesRawData() async throws {
        let harness = try Self.harness.get()
        let raw: [UInt8] = [0x02, 0x01, 0x04, 0x06, 0xFF, 0xFF, 0xFF, 0xCA, 0xFE, 0x01]
        let result = try await CentralTool().run([
            "advertise", "--transport", "tcp:127.0.0.1:\(harness.radio.tcpPort)", "--raw", Self.hex(raw),
            "--non-connectable", "--duration", "2",
        ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("non-connectable"), "\(result.output)")
        #expect(result.output.contains(Hex.string(raw)), "\(result.output)")
        let address = try #require(result.output.split(separator: " ").dropFirst(2).first.map(String.init))
        let expected = Self.hex(raw)
        let event = try await harness.waitForEvent("heard", timeout: .seconds(5)) { $0["data"] as? String == expected }
        #expect(event["address"] as? String == address)
        #expect(event["connectable"] as? Bool == false)
        #expect(event["legacy"] as? Bool == true)
    }
}
