@testable import ATT
import BluetoothCore
import TestSupport
import Testing

/// A PDU longer than the bearer's ATT_MTU is invalid (Core 5.4 Vol 3 Part F 3.2.8): a
/// hostile server must not get one delivered, whichever kind it is.
@Suite struct ClientMTUBoundTests {
    /// Handle 0x0003 and `count` value bytes: a PDU of 3 + `count` bytes.
    static func notification(_ opcode: String, valueBytes count: Int) -> String {
        "\(opcode) 03 00 \(Array(repeating: "AB", count: count).joined(separator: " "))"
    }

    @Test func aNotificationLongerThanTheMTUIsCountedAndDropped() async throws {
        let (client, bearer) = makeClient([], mtu: 23)
        let values = Collected<ATTHandleValue>()
        let subscription = client.addValueHandler(handle: 3) { values.append($0) }
        bearer.inject(Self.notification("1B", valueBytes: 21))  // 24 bytes at ATT_MTU 23
        bearer.inject(Self.notification("1B", valueBytes: 20))  // 23 bytes: the most that fits
        await bearer.drain()
        #expect(values.all.map(\.value.count) == [20])
        #expect(client.statistics.oversizedPDUs == 1)
        #expect(client.statistics.valuesDelivered == 1)
        subscription.cancel()
    }

    @Test func aMultipleHandleValueNotificationLongerThanTheMTUIsDroppedWhole() async throws {
        let (client, bearer) = makeClient([], mtu: 23)
        let values = Collected<ATTHandleValue>()
        let subscription = client.addValueHandler { values.append($0) }
        // Two tuples of 4 + 8 bytes and 4 + 7 bytes: 24 bytes with the opcode.
        bearer.inject("23 03 00 08 00 \(bytes(8)) 04 00 07 00 \(bytes(7))")
        await bearer.drain()
        #expect(values.all.isEmpty)
        #expect(client.statistics.oversizedPDUs == 1)
        subscription.cancel()
    }

    @Test func anIndicationLongerThanTheMTUIsDroppedButConfirmed() async throws {
        let (client, bearer) = makeClient([step("1E")], mtu: 23)
        let values = Collected<ATTHandleValue>()
        let subscription = client.addValueHandler(handle: 3) { values.append($0) }
        bearer.inject(Self.notification("1D", valueBytes: 40))
        try await withDeadline("the confirmation") { await bearer.waitForSent(1) }
        await bearer.drain()
        #expect(values.all.isEmpty)
        #expect(client.statistics.oversizedPDUs == 1)
        #expect(client.statistics.indicationsConfirmed == 1)
        #expect(bearer.failures.isEmpty)
        subscription.cancel()
    }

    @Test func aResponseLongerThanTheMTUFailsItsRequestWithoutWaitingForTheDeadline() async throws {
        // 25 bytes answer a Read at ATT_MTU 23; the next request still works.
        let (client, bearer) = makeClient([
            step("0A 03 00", "0B \(bytes(24))"),
            step("0A 04 00", "0B \(bytes(22))"),
        ], mtu: 23, timeout: .seconds(60))
        let error = try await withDeadline("the oversized response's failure", seconds: 20) {
            await attError { () async throws(ATTError) in try await client.read(3) }
        }
        guard case .malformedResponse(.readRequest, _) = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(try await client.read(4).attributeValue.count == 22)
        #expect(client.statistics.oversizedPDUs == 1)
        #expect(bearer.closedWith == nil)
    }

    /// The server may use the new MTU as soon as it has answered: a notification right
    /// behind the response, before the exchanging task has resumed, may be as long as the
    /// client offered (100), not one byte longer.
    @Test(arguments: [(97, true), (98, false)])
    func aValueRightAfterTheExchangeIsBoundedByTheOfferedMTU(_ valueBytes: Int, delivered: Bool) async throws {
        let (client, bearer) = makeClient([step("02 64 00", "03 00 02", Self.notification("1B", valueBytes: valueBytes))], mtu: 23)
        let values = Collected<ATTHandleValue>()
        let subscription = client.addValueHandler(handle: 3) { values.append($0) }
        #expect(try await client.exchangeMTU(clientRxMTU: 100) == 100)
        await bearer.drain()
        #expect(values.all.map(\.value.count) == (delivered ? [valueBytes] : []))
        #expect(client.statistics.oversizedPDUs == (delivered ? 0 : 1))
        subscription.cancel()
    }
}

/// Queues the peer can feed are bounded, and what they drop is counted.
@Suite struct ClientStreamBoundTests {
    @Test func aStreamWhoseReaderFallsBehindDropsTheOldestAndCountsThem() async throws {
        let (client, bearer) = makeClient([])
        let stream = client.values(handle: 3, bufferingPolicy: .bufferingNewest(2))
        for value in 1...5 { bearer.inject("1B 03 00 0\(value)") }
        await bearer.drain()
        #expect(client.statistics.valuesDroppedByStreams == 3)
        let kept = try await withDeadline("the kept values") {
            var iterator = stream.makeAsyncIterator()
            return [await iterator.next()?.value, await iterator.next()?.value]
        }
        #expect(kept == [[4], [5]])
    }
}

/// `count` bytes of hex.
private func bytes(_ count: Int) -> String {
    Array(repeating: "5A", count: count).joined(separator: " ")
}
