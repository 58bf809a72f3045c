import BareBLE
import BluetoothCore
import HCI
import L2CAP
import Testing
import TestSupport

/// A connection parameter request from our peripheral side, both ways the specification
/// offers: the link layer's Connection Parameters Request procedure when both controllers
/// have it (Core Vol 6 Part B 5.1.7), L2CAP's Connection Parameter Update Request when the
/// central's does not (Vol 3 Part A 4.20). Bumble's central accepts both.
@Suite(.serialized) struct PeripheralHostParameters {
    /// 30 - 50 ms, no latency, 4 s supervision timeout.
    static let request = ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 0, timeoutMultiplier: 400)

    func connect(parametersRequest: Bool) async throws -> (Central, PeripheralHost, RemoteCentral, String) {
        let central = try await PeripheralRadio.open()
        let (host, _, name, link) = try await PeripheralRadio.accepted(on: central, advertising: "BareBLE-Params", parametersRequest: parametersRequest)
        return (central, host, link, name)
    }

    func centralSaw(_ name: String) async throws -> [String: Any] {
        try await PeripheralRadio.log.get().wait("connection-parameters") { $0["peer"] as? String == name }
    }

    @Test("both link layers have the procedure: HCI LE Connection Update from the peripheral")
    func linkLayer() async throws {
        let (central, host, link, name) = try await connect(parametersRequest: true)
        defer { central.close() }
        let update = try await link.requestConnectionParameters(Self.request)
        guard case let .linkLayer(timing) = update else {
            Issue.record("expected the link layer procedure, got \(update)")
            return
        }
        #expect(timing.connectionInterval == 40 && timing.supervisionTimeout == 400)
        #expect(link.connection?.timing == timing)
        let seen = try await centralSaw(name)
        #expect(seen["interval"] as? Double == 50)
        withExtendedLifetime(host) {}
    }

    @Test("the central's link layer lacks it: L2CAP request, accepted, then the central's update")
    func l2cap() async throws {
        let (central, host, link, name) = try await connect(parametersRequest: false)
        defer { central.close() }
        let features = try await #require(link.connection).readRemoteFeatures()
        #expect(!features.contains(.connectionParametersRequestProcedure))
        let update = try await link.requestConnectionParameters(Self.request)
        guard case let .l2cap(timing) = update else {
            Issue.record("expected the L2CAP request, got \(update)")
            return
        }
        #expect(timing.connectionInterval == 40 && timing.peripheralLatency == 0 && timing.supervisionTimeout == 400)
        #expect(link.connection?.timing == timing)
        let seen = try await centralSaw(name)
        #expect(seen["interval"] as? Double == 50)
        withExtendedLifetime(host) {}
        // The radio's capture of this controller: the signaling exchange decodes cleanly.
        let address = try #require(central.controller.info?.address)
        let capture = "\(try PeripheralRadio.harness.get().captureDirectory)/client-\(address.value & 0xFFFF).btsnoop"
        let report = try await Tshark.check(capture)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
        #expect(try Tshark.verbose(capture).contains("Connection Parameter Update Request"))
    }

    @Test("invalid parameters are refused before anything is sent")
    func invalid() async throws {
        let (central, host, link, _) = try await connect(parametersRequest: true)
        defer { central.close() }
        // Supervision timeout 100 ms is not above (1 + 0) * 50 ms * 2 = 100 ms.
        let bad = ConnectionParameterUpdateRequest(intervalMin: 24, intervalMax: 40, peripheralLatency: 0, timeoutMultiplier: 10)
        await #expect(throws: PeripheralError.signaling(.invalidConnectionParameters(bad))) {
            try await link.requestConnectionParameters(bad)
        }
        withExtendedLifetime(host) {}
    }
}
