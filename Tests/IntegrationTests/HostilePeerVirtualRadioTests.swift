import ATT
import BareBLE
import BluetoothCore
import GATT
import HCI
import SMP
import Testing
import TestSupport

/// The facade against the radio's hostile peripheral (tools/virtual-radio/radio_hostile.py):
/// a Bumble GATT server whose answers are rewritten on the air to break the protocol the
/// ways issue 14 lists. Each misbehaviour must end in a typed error or a count, and the
/// Central must keep working: after each one the same link, or a new one, discovers the
/// honest database.
@Suite(.serialized) struct HostilePeerVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--hostile"]) }
    static let hostile = DeviceAddress(BluetoothAddress(0xC44B_4D00_0020), type: .random)
    static let longValue = BluetoothUUID("B4AE0021-7E57-4BA2-B1E0-00000000C0DE")!
    static let notifyValue = BluetoothUUID("B4AE0022-7E57-4BA2-B1E0-00000000C0DE")!
    /// GAP, GATT, Battery and the hostile test service.
    static let serviceCount = 4

    /// A fresh Central connected to the hostile peer, with `modes` on (the radio keeps them
    /// until the next `hostile` line).
    func connect(_ modes: String = "none") async throws -> (Central, Peripheral) {
        let harness = try Self.harness.get()
        try await harness.control("hostile \(modes)")
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort))
        try await central.powerOn()
        return (central, try await central.connect(to: Self.hostile, timeout: .seconds(10)))
    }

    /// Discovery fails with `expected`, then, once the peer behaves, succeeds on the same link.
    func discoveryFails(_ modes: String, _ expected: (PeripheralError) -> Bool) async throws {
        let (central, peripheral) = try await connect(modes)
        defer { central.close() }
        let error = await #expect(throws: PeripheralError.self) { try await peripheral.discoverServices() }
        #expect(error.map(expected) == true, "\(modes): \(String(describing: error))")
        try await Self.harness.get().control("hostile none")
        #expect(try await peripheral.discoverServices().count == Self.serviceCount)
    }

    static func invalidResponse(_ error: PeripheralError) -> Bool {
        if case .gatt(.invalidResponse) = error { true } else { false }
    }

    @Test func servicesOutOfOrderAreAnInvalidResponse() async throws {
        try await discoveryFails("services-reversed", Self.invalidResponse)
    }

    @Test func overlappingServicesAreAnInvalidResponse() async throws {
        try await discoveryFails("services-overlap", Self.invalidResponse)
    }

    @Test func aServiceAtHandleZeroIsAnInvalidResponse() async throws {
        try await discoveryFails("service-from-zero", Self.invalidResponse)
    }

    @Test func characteristicsOutOfOrderAreAnInvalidResponse() async throws {
        try await discoveryFails("characteristics-reversed", Self.invalidResponse)
    }

    @Test func truncatedDiscoveryResponsesAreMalformed() async throws {
        try await discoveryFails("truncate") { error in
            if case .gatt(.att(.malformedResponse)) = error { true } else { false }
        }
    }

    @Test func aResponseToAnotherRequestClosesTheBearerAndDropsTheLink() async throws {
        let (central, peripheral) = try await connect("wrong-response")
        defer { central.close() }
        let error = await #expect(throws: PeripheralError.self) { try await peripheral.discoverServices() }
        guard case .gatt(.att(.unexpectedResponse(request: .readByGroupTypeRequest, received: .readByTypeResponse))) = error else {
            Issue.record("expected an unexpected response, got \(String(describing: error))")
            return
        }
        // No further PDU may go on this bearer (Vol 3 Part F 3.3.3): we end the link.
        #expect(try await peripheral.disconnection() == .connectionTerminatedByLocalHost)
        try await Self.harness.get().control("hostile none")
        let (again, fresh) = try await connect()
        defer { again.close() }
        #expect(try await fresh.discoverServices().count == Self.serviceCount)
    }

    @Test func aLongReadThatNeverEndsStopsAt512Bytes() async throws {
        let (central, peripheral) = try await connect()
        defer { central.close() }
        try await peripheral.discoverServices()
        let long = try #require(peripheral.characteristic(Self.longValue))
        #expect(try await peripheral.readValue(for: long) == Array(0..<100))
        try await Self.harness.get().control("hostile endless-blob")
        let error = await #expect(throws: PeripheralError.self) { try await peripheral.readValue(for: long) }
        #expect(error.map(Self.invalidResponse) == true, "\(String(describing: error))")
        try await Self.harness.get().control("hostile none")
        #expect(try await peripheral.readValue(for: long) == Array(0..<100))
    }

    /// The peer announces a Server Rx MTU of 5 but goes on as if it had agreed 517: the
    /// bearer stays at 23 (Vol 3 Part F 3.4.2.2), and a response longer than that, dropped
    /// unread by L2CAP, fails its request at once instead of at the 30 s transaction timeout.
    @Test func aServerMTUBelowTheMinimumLeavesTheBearerAt23() async throws {
        let (central, peripheral) = try await connect("small-mtu")
        defer { central.close() }
        #expect(peripheral.mtu == ATTConstants.minimumLEMTU)
        let started = ContinuousClock.now
        let error = await #expect(throws: PeripheralError.self) { try await peripheral.discoverServices() }
        guard case .gatt(.att(.malformedResponse(_, .invalidValue))) = error else {
            Issue.record("expected the oversized response to fail its request, got \(String(describing: error))")
            return
        }
        #expect(ContinuousClock.now - started < ATTConstants.transactionTimeout)
        #expect(peripheral.att.statistics.oversizedPDUs == 1)
        #expect(try #require(central.channels).statistics.oversizedPDUs >= 1)
    }

    @Test func aFloodOfServiceChangedIndicationsIsMergedIntoFewRediscoveries() async throws {
        let (central, peripheral) = try await connect()
        defer { central.close() }
        try await peripheral.discoverServices()
        var changes = peripheral.serviceChanges.makeAsyncIterator()
        let flood = 3_000
        try await Self.harness.get().control("hostile-flood service-changed-indications \(flood)")
        // The flood left the peer before this read's response, and the bearer delivers in order.
        let battery = try #require(peripheral.characteristic(GATTUUID.batteryLevel))
        #expect(try await peripheral.readValue(for: battery) == [50])
        let statistics = peripheral.gatt.serviceChangedStatistics
        #expect(statistics.indications == flood)
        #expect(peripheral.att.statistics.indicationsConfirmed >= flood)
        #expect(statistics.rediscoveries <= 2, "\(statistics)")
        #expect(statistics.mergedRanges >= flood - 2, "\(statistics)")
        let after = await changes.next()
        #expect(after?.count == Self.serviceCount)
    }

    @Test func serviceChangedNotificationsChangeNothing() async throws {
        let (central, peripheral) = try await connect()
        defer { central.close() }
        try await peripheral.discoverServices()
        try await Self.harness.get().control("hostile-flood service-changed-notifications 1000")
        let battery = try #require(peripheral.characteristic(GATTUUID.batteryLevel))
        #expect(try await peripheral.readValue(for: battery) == [50])
        let statistics = peripheral.gatt.serviceChangedStatistics
        #expect(statistics.notificationsIgnored == 1000)
        #expect(statistics.rediscoveries == 0)
    }

    @Test func notificationsLongerThanTheMTUAreCountedAndNeverDelivered() async throws {
        let (central, peripheral) = try await connect()
        defer { central.close() }
        try await peripheral.discoverServices()
        let notifying = try #require(peripheral.characteristic(Self.notifyValue))
        _ = try await peripheral.notifications(for: notifying)
        let before = peripheral.att.statistics.valuesDelivered
        try await Self.harness.get().control("hostile-flood oversized-notifications 1000")
        let battery = try #require(peripheral.characteristic(GATTUUID.batteryLevel))
        #expect(try await peripheral.readValue(for: battery) == [50])
        #expect(peripheral.att.statistics.oversizedPDUs == 1000)
        #expect(peripheral.att.statistics.valuesDelivered == before)
    }

    @Test func aFloodOfUnknownSignalingCommandsIsAnsweredWithinTheBoundAndTheLinkLives() async throws {
        let (central, peripheral) = try await connect()
        defer { central.close() }
        try await peripheral.discoverServices()
        let channels = try #require(central.channels)
        let before = channels.statistics
        let flood = 5_000
        try await Self.harness.get().control("hostile-flood signaling-unknown \(flood)")
        let battery = try #require(peripheral.characteristic(GATTUUID.batteryLevel))
        #expect(try await peripheral.readValue(for: battery) == [50])
        let after = channels.statistics
        let answered = after.commandRejectsSent - before.commandRejectsSent
        let dropped = after.answersDroppedForFullQueue - before.answersDroppedForFullQueue
        #expect(answered + dropped == flood, "rejected \(answered), dropped \(dropped)")
        #expect(peripheral.state == .connected)
    }

    /// The controller stops returning ACL credits (the radio holds our packets) while the
    /// peer floods signaling commands we must reject: at most the controller's 8 buffers
    /// and L2CAP's 32 queued answers are kept, the rest counted, and once credits return
    /// the queued answers leave and the link reads again.
    @Test func withCreditsWithheldAFloodOfSignalingCommandsQueuesWithinTheBound() async throws {
        let (central, peripheral) = try await connect()
        defer { central.close() }
        try await peripheral.discoverServices()
        let notifying = try #require(peripheral.characteristic(Self.notifyValue))
        let values = try await peripheral.notifications(for: notifying)
        let channels = try #require(central.channels)
        let before = channels.statistics
        let harness = try Self.harness.get()
        try await harness.control("credits hold")
        let flood = 5_000
        try await harness.control("hostile-flood signaling-unknown \(flood)")
        // A notification sent after the flood on the same link: once it is here, so is the flood.
        try await harness.control("notify hostile \(Self.notifyValue) f1")
        let fenced = try await withDeadline("the notification after the flood", seconds: 30) { () async -> [UInt8]? in
            for await value in values { return value }
            return nil
        }
        #expect(fenced == [0xF1])
        let held = channels.statistics
        let queued = held.commandRejectsSent - before.commandRejectsSent
        let dropped = held.answersDroppedForFullQueue - before.answersDroppedForFullQueue
        #expect(queued + dropped == flood, "queued \(queued), dropped \(dropped)")
        // The controller's 8 buffers and the 32 answers L2CAP keeps per connection.
        #expect(queued <= 8 + 32, "queued \(queued)")
        #expect(peripheral.state == .connected)
        try await harness.control("credits release")
        let battery = try #require(peripheral.characteristic(GATTUUID.batteryLevel))
        #expect(try await peripheral.readValue(for: battery) == [50])
        #expect(peripheral.state == .connected)
    }

    @Test func aPairingResponseWithAKeySizeOver16FailsPairingWithATypedError() async throws {
        let (central, peripheral) = try await connect("smp-key-size")
        defer { central.close() }
        let error = await #expect(throws: PeripheralError.self) { try await peripheral.pair() }
        guard case .security(.refused(let reason, _)) = error else {
            Issue.record("expected pairing refused, got \(String(describing: error))")
            return
        }
        #expect(reason == .invalidParameters || reason == .encryptionKeySize, "\(reason)")
        #expect(!peripheral.isEncrypted)
    }
}
