import BluetoothCore
import Foundation
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// Connections against Bumble's peripheral on the virtual radio: an independent link layer
/// that logs what it saw (`connected`, `disconnected` with the reason it was told).
@Suite(.serialized) struct ConnectionVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral", "--advertiser"]) }
    static let peripheral = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)
    static let beacon = DeviceAddress(BluetoothAddress(0xC44B_4D00_0002), type: .random)

    struct Stack {
        let controller: HCIController
        let info: ControllerInfo
        let connector: Connector
    }

    func open(_ harness: RadioHarness, capture: String? = nil) async throws -> Stack {
        var transport: any HCITransport = try TCPTransport.connect(host: "127.0.0.1", port: harness.radio.tcpPort)
        if let capture { transport = CapturingTransport(transport, writer: try BTSnoopWriter(path: capture, datalink: .h4)) }
        let controller = HCIController(transport: transport)
        try controller.start()
        let info = try await controller.powerOn()
        return Stack(controller: controller, info: info, connector: Connector(controller: controller))
    }

    @Test func connectReadFeaturesUpdateAndDisconnectWithACleanCapture() async throws {
        let harness = try Self.harness.get()
        let capture = TestScratch.root + "/connection.btsnoop"
        let stack = try await open(harness, capture: capture)
        #expect(stack.info.supports(LEExtendedCreateConnection.self))
        let connection = try await stack.connector.connect(to: Self.peripheral, timeout: .seconds(5))
        #expect(connection.role == .central)
        #expect(connection.peer == Self.peripheral)
        #expect(connection.timing.connectionInterval >= 24 && connection.timing.connectionInterval <= 40)
        try await harness.waitForEvent("connected", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" }

        let features = try await connection.readRemoteFeatures()
        #expect(features.contains(.leEncryption))
        #expect(connection.remoteFeatures == features)

        let timing = try await connection.updateParameters(.init(connectionIntervalMin: 60, connectionIntervalMax: 80, maxLatency: 1, supervisionTimeout: 600))
        #expect((60...80).contains(timing.connectionInterval))
        #expect(timing.peripheralLatency == 1)
        #expect(timing.supervisionTimeout == 600)
        #expect(connection.timing == timing)

        try await connection.disconnect()
        #expect(!connection.isConnected)
        #expect(connection.disconnectReason == .connectionTerminatedByLocalHost)
        // The peripheral was told why: Remote User Terminated Connection.
        try await harness.waitForEvent("disconnected", timeout: .seconds(5)) { $0["peer"] as? String == "peripheral" && $0["reason"] as? Int == 0x13 }
        #expect(stack.connector.connections.isEmpty)
        #expect(stack.controller.statistics.malformedEvents == 0)
        stack.controller.close()

        let report = try await Tshark.check(capture)
        #expect(report.packets > 20)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
        let decoded = try Tshark.verbose(capture)
        #expect(decoded.contains("LE Extended Create Connection"))
    }

    @Test func aNonConnectableAdvertiserTimesOutAndTheCancelLeavesTheControllerUsable() async throws {
        let harness = try Self.harness.get()
        let stack = try await open(harness)
        defer { stack.controller.close() }
        await #expect(throws: ConnectionError.timedOut(Self.beacon, after: .milliseconds(700))) {
            try await stack.connector.connect(to: Self.beacon, timeout: .milliseconds(700))
        }
        // Nothing is left initiating: the next attempt is accepted and succeeds.
        let connection = try await stack.connector.connect(to: Self.peripheral, timeout: .seconds(5))
        #expect(connection.isConnected)
        try await connection.disconnect()
    }

    @Test func dataLengthAndPHYRequestsAtConnect() async throws {
        let harness = try Self.harness.get()
        let stack = try await open(harness)
        defer { stack.controller.close() }
        let connection = try await stack.connector.connect(
            to: Self.peripheral, options: .init(dataLength: 251, prefer2MPHY: true), timeout: .seconds(5))
        #expect(connection.dataLength.maxTxOctets == 251)
        // The radio models LE Set PHY's conversation but keeps links on LE 1M.
        #expect(connection.phy == .le1M)
        try await connection.disconnect()
    }

    @Test func theConnectToolFindsTheAddressTypeAndReports() async throws {
        let harness = try Self.harness.get()
        let transport = "tcp:127.0.0.1:\(harness.radio.tcpPort)"
        let text = try await CentralTool().run(["connect", "C4:4B:4D:00:00:01", "--transport", transport, "--features"])
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("connected to C4:4B:4D:00:00:01/random"), "\(text.output)")
        #expect(text.output.contains("role                 central"), "\(text.output)")
        #expect(text.output.contains("LE Encryption"), "\(text.output)")
        #expect(text.output.contains("ATT MTU              517"), "\(text.output)")
        #expect(text.output.contains("disconnected: Connection Terminated By Local Host (0x16)"), "\(text.output)")

        let json = try await CentralTool().run(["connect", "C4:4B:4D:00:00:01/random", "--transport", transport, "--json", "--hold", "0.2"])
        #expect(json.status == 0, "\(json.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["address"] as? String == "C4:4B:4D:00:00:01")
        #expect(object["addressType"] as? String == "random")
        #expect(object["role"] as? String == "central")
        #expect(object["txPHY"] as? String == "LE 1M")
        #expect((object["connectionIntervalMicroseconds"] as? Int ?? 0) >= 30_000)
        #expect(object["supervisionTimeoutMilliseconds"] as? Int == 4000)
        #expect(object["maxTxOctets"] as? Int == 27)
        // The peer's server offers 517 too (tools/virtual-radio/README.md).
        #expect(object["mtu"] as? Int == 517)

        let refused = try await CentralTool().run(["connect", "C4:4B:4D:00:00:02/random", "--transport", transport, "--timeout", "0.5"])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("is it advertising connectably and in range?"), "\(refused.errors)")
    }
}
