import BluetoothCore
import HCITransport
import Testing
import TestSupport
import Trace

/// `stats`' sums over scripted captures whose figures are worked out by hand
/// (TraceScript.statisticsExample), and its bounds.
@Suite struct TraceStatisticsTests {
    static func statistics(_ records: [CaptureRecord]) -> TraceStatistics {
        var decoder = TraceDecoder(withFields: false)
        var statistics = TraceStatistics()
        for record in records { statistics.add(decoder.decode(record)) }
        return statistics
    }

    @Test func theExampleAddsUpToTheFiguresWorkedOutByHand() throws {
        let statistics = Self.statistics(TraceScript.statisticsExample().captureRecords())
        #expect(statistics.packets == 18)
        #expect(statistics.connections.count == 1)
        let connection = try #require(statistics.connections.first)
        #expect(connection.peer == DeviceAddress(TraceScript.examplePeer, type: .random))
        #expect(connection.handle == 0x0040 && connection.duration == 20_000)
        #expect(connection.sent == TraceStatistics.Traffic(packets: 4, bytes: 32))
        #expect(connection.received == TraceStatistics.Traffic(packets: 7, bytes: 58))
        #expect(connection.transactions.count == 3)
        #expect((1_000...1_031).contains(connection.transactions.percentile(0.5)!))
        #expect(connection.transactions.percentile(0.99) == 2_000)
        #expect(connection.notifications == 3 && connection.indications == 0)
        #expect(connection.attErrors == [.insufficientAuthentication: 1])
        #expect(connection.encryptionEnabled == 1 && connection.encryptionFailed == 0)
        #expect(connection.pairingAttempts == 1 && connection.pairingCompleted == 1 && connection.pairingFailures.isEmpty)
        #expect(connection.disconnectReason?.rawValue == 0x13)
        let advertiser = try #require(statistics.advertisers.first)
        #expect(statistics.advertisers.count == 1 && advertiser.address == TraceScript.exampleAdvertiser)
        #expect(advertiser.reports == 4 && advertiser.rssiMinimum == -70 && advertiser.rssiMaximum == -50)
        #expect(advertiser.advertisements == 3 && advertiser.meanInterval == 100_000)
    }

    /// A capture's times are whatever its writer put there: a round trip, a connection's
    /// length and an advertising interval from the far ends of Int64 saturate, never trap
    /// (found by the `trace` fuzz target: an answer stamped before its request overflowed).
    @Test func timesFromTheEndsOfTheRangeSaturate() throws {
        var script = TraceScript()
        script.now = .min
        script.connected(0x40, peer: TraceScript.examplePeer)
        script.advertisingReport(TraceScript.exampleAdvertiser, rssi: -60)
        script.l2cap([0x0A, 0x03, 0x00], sent: true)
        script.now = .max
        script.l2cap([0x0B, 0x01], sent: false)
        script.advertisingReport(TraceScript.exampleAdvertiser, rssi: -60)
        script.l2cap([0x0A, 0x03, 0x00], sent: false)
        script.now = .min
        script.l2cap([0x0B, 0x01], sent: true)
        script.now = .max
        script.disconnected(0x40)
        let statistics = Self.statistics(script.captureRecords())
        let connection = try #require(statistics.connections.first)
        #expect(connection.duration == .max)
        #expect(connection.transactions.count == 2)
        #expect(connection.transactions.percentile(0.99)! > 0)
        #expect(statistics.advertisers.first?.meanInterval == .max)
    }

    /// A pairing the peer refuses and one the link ends in the middle of.
    @Test func pairingOutcomesAreTold() throws {
        var script = TraceScript()
        script.connected(0x0041, peer: TraceScript.examplePeer)
        script.l2cap([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], channel: 0x0006, handle: 0x0041, sent: true)
        script.l2cap([0x05, 0x05], channel: 0x0006, handle: 0x0041, sent: false)
        script.encryptionChanged(0x0041, status: 0x06, enabled: false)
        script.l2cap([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], channel: 0x0006, handle: 0x0041, sent: true)
        script.disconnected(0x0041, reason: 0x08)
        let connection = try #require(Self.statistics(script.captureRecords()).connections.first)
        #expect(connection.pairingAttempts == 2 && connection.pairingCompleted == 0 && connection.pairingUnfinished == 1)
        #expect(connection.pairingFailures.map { $0.key.rawValue } == [0x05] && connection.pairingFailures.first?.value == 1)
        #expect(connection.encryptionFailed == 1 && connection.encryptionEnabled == 0)
    }

    /// A capture of 1,000 connections (each on a fresh handle, never disconnected) and
    /// 5,000 advertisers: the tables stop at their bounds and count what they forgot; the
    /// newest entries are the ones kept.
    @Test func tablesAreBoundedAndCountWhatTheyForget() {
        var script = TraceScript()
        for number in 0..<1_000 {
            let handle = UInt16(number % 0x0EFF)
            script.connected(handle, peer: BluetoothAddress(UInt64(0xC0_00_00_00_00_00) + UInt64(number)))
            script.l2cap([0x1B, 0x03, 0x00, 0x01], handle: handle, sent: false)
        }
        for number in 0..<5_000 { script.advertisingReport(BluetoothAddress(UInt64(0xD0_00_00_00_00_00) + UInt64(number)), rssi: -40) }
        let statistics = Self.statistics(script.captureRecords())
        #expect(statistics.connections.count == TraceStatistics.maximumConnections)
        #expect(statistics.forgottenConnections == 1_000 - TraceStatistics.maximumConnections)
        #expect(statistics.connections.allSatisfy { $0.received.packets == 1 && $0.notifications == 1 })
        #expect(statistics.connections.last?.peer?.address == BluetoothAddress(UInt64(0xC0_00_00_00_00_00) + 999))
        #expect(statistics.advertisers.count == TraceStatistics.maximumAdvertisers)
        #expect(statistics.forgottenAdvertisers == 5_000 - TraceStatistics.maximumAdvertisers)
        #expect(statistics.advertisers.allSatisfy { $0.reports == 1 })
    }

    /// 100,000 seeded records of random bytes, half of them shaped as events or ATT on a
    /// few handles so the summaries reach past the decoders: stats and gatt never trap.
    @Test func randomRecordsNeverTrapTheSummaries() async throws {
        try await cpuBound { () throws in
            var random = SeededRandom(seed: 4)
            var decoder = TraceDecoder(withFields: false)
            var statistics = TraceStatistics()
            var database = TraceGATTDatabase()
            for number in 0..<100_000 {
                var payload = (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let opcode: MonitorRecord.Opcode
                switch number % 4 {
                case 0:
                    opcode = .eventPacket
                    payload = [[0x3E, 0x05, 0x08, 0x30, 0x59][number / 4 % 5], UInt8(payload.count + 1), 0x01 + UInt8(number / 20 % 2)] + payload
                case 1:
                    opcode = .aclReceive
                    let pdu = [UInt8.random(in: 0x01...0x1E, using: &random)] + payload
                    payload = [UInt8(number % 3), 0x20, UInt8(pdu.count + 4), 0, UInt8(pdu.count), 0, number % 7 == 0 ? 6 : 4, 0] + pdu
                case 2:
                    opcode = .aclTransmit
                    let pdu = [UInt8.random(in: 0x01...0x1E, using: &random)] + payload
                    payload = [UInt8(number % 3), 0x00, UInt8(pdu.count + 4), 0, UInt8(pdu.count), 0, 4, 0] + pdu
                default:
                    opcode = MonitorRecord.Opcode(rawValue: UInt16.random(in: 0...16, using: &random))
                }
                let packet = decoder.decode(CaptureRecord(number: number, index: 0, opcode: opcode, timestamp: Int64.random(in: .min ... .max, using: &random), payload: payload))
                statistics.add(packet)
                database.add(packet)
                await yieldPeriodically(iteration: number)
            }
            _ = try? database.result()
            #expect(statistics.packets == 100_000 && !statistics.connections.isEmpty)
            #expect(statistics.connections.count <= TraceStatistics.maximumConnections)
        }
    }
}
