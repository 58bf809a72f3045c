import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// Subscriptions, Service Changed and GATT caching (Core 5.4 Vol 3 Part G 4.10, 4.11,
/// 7.1, 2.5.2).
@Suite struct ClientSubscriptionTests {
    static let measurement = SampleServer.database.characteristic(GATTUUID.heartRateMeasurement)!

    /// After Service Changed 0x000C-0x0014 (its confirmation sent): only that range is
    /// discovered again, now with a third characteristic, and the new hash read.
    static let heartRateRediscovered: [ScriptedBearer.Step] = [
            step("10 0C 00 14 00 00 28", "11 06 0C 00 14 00 0D 18"),
            step("08 0C 00 14 00 02 28", "01 08 0C 00 0A"),
            step("08 0C 00 14 00 03 28", "09 07 0D 00 10 0E 00 37 2A 10 00 02 11 00 38 2A 12 00 08 13 00 39 2A"),
            step("08 14 00 14 00 03 28", "01 08 14 00 0A"),
            step("04 0F 00 0F 00", "05 01 0F 00 02 29"),
            step("04 14 00 14 00", "05 01 14 00 01 29"),
            SampleServer.readOtherHash,
    ]

    @Test func subscribeWritesTheCCCDOnceAndTheLastConsumerTurnsItOff() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "13"),
            step("12 0F 00 00 00", "13"),
        ])
        let first = try await client.subscribe(to: Self.measurement)
        let second = try await client.subscribe(to: Self.measurement)
        #expect(bearer.sent.count == 1)
        // Consumers stop by being cancelled, as an application's task would be.
        let (forwarded, forward) = AsyncStream.makeStream(of: [UInt8].self)
        let consumer = Task { for await value in first { forward.yield(value) } }
        let other = Task { for await _ in second {} }
        bearer.inject("1B 0E 00 06 48")
        bearer.inject("1B 10 00 01")  // another handle: not for this stream
        bearer.inject("1B 0E 00 06 49")
        let values = try await withDeadline("two notifications") {
            var iterator = forwarded.makeAsyncIterator()
            var values: [[UInt8]] = []
            while values.count < 2, let value = await iterator.next() { values.append(value) }
            return values
        }
        #expect(values == [[0x06, 0x48], [0x06, 0x49]])
        other.cancel()
        consumer.cancel()
        try await withDeadline("the CCCD to be turned off") { await bearer.waitForSent(2) }
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 0)
        #expect(bearer.failures.isEmpty)
    }

    @Test func unsubscribeEndsEveryStreamAndWaitsForTheCCCDWrite() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "13"),
            step("12 0F 00 00 00", "13"),
        ])
        let first = try await client.subscribe(to: Self.measurement)
        let second = try await client.subscribe(to: Self.measurement)
        try await client.unsubscribe(from: Self.measurement)
        // Written once, before unsubscribe returned; both streams are over.
        #expect(bearer.sent.count == 2)
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 0)
        let ended = try await withDeadline("both streams to end") {
            for await _ in first {}
            for await _ in second {}
            return true
        }
        #expect(ended)
        // Nothing more is written when nobody is subscribed.
        try await client.unsubscribe(from: Self.measurement)
        #expect(bearer.sent.count == 2)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    /// A second consumer that subscribes while the first one's CCCD write is out waits for
    /// that write: it must not return subscribed before the server has the CCCD on, and
    /// when the first write is refused, it writes the CCCD itself.
    @Test func aSecondSubscriberWaitsForTheFirstsCCCDWrite() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "01 12 0F 00 03", held: true),
            step("12 0F 00 01 00", "13"),
        ], timeout: heldStepTimeout)
        let first = Task { await gattError { () async throws(GATTError) in _ = try await client.subscribe(to: Self.measurement) } }
        try await withDeadline("the first CCCD write") { await bearer.waitForSent(1) }
        let second = Task { () async throws(GATTError) -> AsyncStream<[UInt8]> in try await client.subscribe(to: Self.measurement) }
        try await withDeadline("the second consumer to register") {
            while await client.subscriberCount(valueHandle: 0x000E) < 2 { try await Task.sleep(for: .milliseconds(1)) }
        }
        bearer.release()
        guard case .att(.errorResponse(_, _, .writeNotPermitted))? = await first.value else {
            Issue.record("the first subscription should fail with the server's refusal"); return
        }
        // Before, the second returned at once, subscribed to a CCCD the server refused.
        let stream = try await second.value
        #expect(bearer.sent.count == 2)
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 1)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
        withExtendedLifetime(stream) {}
    }

    /// A subscriber cancelled while it waits for another's CCCD write returns at once,
    /// cancelled, and leaves nothing behind: the server is not written its bits. Before, it
    /// waited out the other write (up to the procedure's deadline for a server that does
    /// not answer).
    @Test func aSubscriberCancelledWhileItWaitsItsTurnReturnsAtOnce() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "13", held: true),
        ], timeout: heldStepTimeout)
        let first = Task { () async throws(GATTError) -> AsyncStream<[UInt8]> in try await client.subscribe(to: Self.measurement, configuration: .notification) }
        try await withDeadline("the first CCCD write") { await bearer.waitForSent(1) }
        let second = Task { await gattError { () async throws(GATTError) in _ = try await client.subscribe(to: Self.measurement, configuration: .indication) } }
        try await withDeadline("the second consumer to register") {
            while await client.subscriberCount(valueHandle: 0x000E) < 2 { try await Task.sleep(for: .milliseconds(1)) }
        }
        second.cancel()
        let outcome = try await withDeadline("the cancelled subscriber", seconds: 30) { await second.value }
        guard case .att(.cancelled)? = outcome else {
            Issue.record("the cancelled subscriber: \(String(describing: outcome))"); return
        }
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 1)
        bearer.release()
        let stream = try await first.value
        // Nothing more is written: the server has what the one consumer left wants.
        try await Task.sleep(for: .milliseconds(100))
        #expect(bearer.sent.count == 1)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
        withExtendedLifetime(stream) {}
    }

    /// A subscriber cancelled while its CCCD write is out: the server may well take that
    /// write (ATT cannot withdraw a request), so once it answers the CCCD is written back
    /// to what the remaining consumers want (none: 0). Before, the server was left
    /// indicating to nobody.
    @Test func aSubscriberCancelledDuringItsCCCDWriteHasItWrittenBack() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 02 00", "13", held: true),
            step("12 0F 00 00 00", "13"),
        ], timeout: heldStepTimeout)
        let subscriber = Task { await gattError { () async throws(GATTError) in _ = try await client.subscribe(to: Self.measurement, configuration: .indication) } }
        try await withDeadline("the CCCD write") { await bearer.waitForSent(1) }
        subscriber.cancel()
        guard case .att(.cancelled)? = await subscriber.value else {
            Issue.record("the cancelled subscriber should return cancelled"); return
        }
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 0)
        bearer.release()
        try await withDeadline("the CCCD written back") { await bearer.waitForSent(2) }
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
    }

    /// A subscriber cancelled while its CCCD write still waited in ATT's queue (behind
    /// another request): the write is withdrawn, never sent, so the server has nothing.
    /// The next subscriber for the same bits writes them. Before, the cancelled write's
    /// bits were counted as written, and the next subscriber skipped its write and heard
    /// nothing.
    @Test func aCCCDWriteWithdrawnByCancellationIsNotTakenAsWritten() async throws {
        let (client, bearer) = makeGATT([
            step("0A 03 00", "0B 01", held: true),
            step("12 0F 00 01 00", "13"),
        ], timeout: heldStepTimeout)
        let read = Task { try await client.att.read(0x0003) }
        try await withDeadline("the read") { await bearer.waitForSent(1) }
        let first = Task { await gattError { () async throws(GATTError) in _ = try await client.subscribe(to: Self.measurement, configuration: .notification) } }
        try await withDeadline("the first consumer to register") {
            while await client.subscriberCount(valueHandle: 0x000E) < 1 { try await Task.sleep(for: .milliseconds(1)) }
        }
        let second = Task { () async throws(GATTError) -> AsyncStream<[UInt8]> in try await client.subscribe(to: Self.measurement, configuration: .notification) }
        try await withDeadline("the second consumer to register") {
            while await client.subscriberCount(valueHandle: 0x000E) < 2 { try await Task.sleep(for: .milliseconds(1)) }
        }
        first.cancel()
        guard case .att(.cancelled)? = await first.value else {
            Issue.record("the cancelled subscriber should return cancelled"); return
        }
        bearer.release()
        _ = try await read.value
        let stream = try await withDeadline("the second subscriber") { try await second.value }
        try await withDeadline("the second subscriber's CCCD write") { await bearer.waitForSent(2) }
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
        withExtendedLifetime(stream) {}
    }

    /// A refused write that would have widened the CCCD (indications on top of a consumer's
    /// notifications) leaves the CCCD as the server has it: the next consumer asking for
    /// indications writes them again instead of believing they are on.
    @Test func aRefusedWiderConfigurationIsNotTakenAsWritten() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "13"),
            step("12 0F 00 03 00", "01 12 0F 00 03"),
            step("12 0F 00 03 00", "13"),
        ])
        let notifications = try await client.subscribe(to: Self.measurement, configuration: .notification)
        let refused = await gattError { () async throws(GATTError) in
            _ = try await client.subscribe(to: Self.measurement, configuration: .indication)
        }
        guard case .att(.errorResponse(_, _, .writeNotPermitted))? = refused else {
            Issue.record("\(String(describing: refused))"); return
        }
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 1)
        // Before, the refused bits stayed in the client's idea of the CCCD: nothing written.
        let indications = try await client.subscribe(to: Self.measurement, configuration: .indication)
        #expect(bearer.sent.count == 3)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
        withExtendedLifetime((notifications, indications)) {}
    }

    /// When the consumer that wanted indications leaves, the CCCD is written down to the
    /// notifications the other still wants: the server stops indicating to nobody.
    @Test func aLeavingConsumerNarrowsTheCCCDToWhatTheOthersWant() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "13"),
            step("12 0F 00 03 00", "13"),
            step("12 0F 00 01 00", "13"),
        ])
        let notifications = try await client.subscribe(to: Self.measurement, configuration: .notification)
        let indications = try await client.subscribe(to: Self.measurement, configuration: .indication) { _ in }
        indications.cancel()
        try await withDeadline("the CCCD narrowed") { await bearer.waitForSent(3) }
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 1)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
        withExtendedLifetime(notifications) {}
    }

    @Test func aSubscriberThatFallsBehindLosesTheOldestValuesCounted() async throws {
        let (client, bearer) = makeGATT([step("12 0F 00 01 00", "13")])
        let stream = try await client.subscribe(to: Self.measurement)
        let extra = 10
        bearer.inject((0..<ATTClient.defaultStreamBuffer + extra).map { [0x1B, 0x0E, 0x00, UInt8(truncatingIfNeeded: $0)] })
        await bearer.drain()
        #expect(client.att.statistics.valuesDroppedByStreams == extra)
        withExtendedLifetime(stream) {}
    }

    @Test func aCharacteristicWithoutCCCDCannotBeSubscribed() async throws {
        let (client, _) = makeGATT([])
        let location = SampleServer.database.characteristic(GATTUUID.bodySensorLocation)!
        let error = await gattError { () async throws(GATTError) in _ = try await client.subscribe(to: location) }
        guard case .invalidRequest = error else { Issue.record("\(String(describing: error))"); return }
    }

    @Test func serviceChangedRediscoversOnlyTheAffectedRange() async throws {
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [
            SampleServer.subscribeServiceChanged,
            // The indication is confirmed, then only 0x000C-0x0014 is discovered again.
            step("1E"),
        ] + Self.heartRateRediscovered)
        _ = try await client.discover()
        let before = bearer.sent.count
        let changes = client.databaseChanges
        bearer.inject("1D 08 00 0C 00 14 00")
        let change = try await withDeadline("the database change") {
            var iterator = changes.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(change?.affectedHandles == 0x000C...0x0014)
        let database = try #require(change?.database)
        #expect(database.service(GATTUUID.heartRate)?.characteristics.map(\.uuid) == [
            GATTUUID.heartRateMeasurement, GATTUUID.bodySensorLocation, GATTUUID.heartRateControlPoint,
        ])
        #expect(database.services.count == 3)
        #expect(database.databaseHash == Hex.bytes(SampleServer.otherHash))
        #expect(await client.database == database)
        // Nothing outside the affected range was asked again, except the hash.
        #expect(bearer.sent[before...].filter(isDiscoveryRequest).count == 6)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func serviceChangedEndsTheSubscriptionsInItsRangeAndANewOneWritesTheCCCDAgain() async throws {
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [
            SampleServer.subscribeServiceChanged,
            step("12 0F 00 01 00", "13"),
            step("1E"),
        ] + Self.heartRateRediscovered + [
            // Subscribing in the new layout writes its CCCD: the old bits say nothing now.
            step("12 0F 00 01 00", "13"),
        ])
        _ = try await client.discover()
        let values = try await client.subscribe(to: Self.measurement)
        let changes = client.databaseChanges
        bearer.inject("1D 08 00 0C 00 14 00")
        let change = try await withDeadline("the database change") {
            var iterator = changes.makeAsyncIterator()
            return await iterator.next()
        }
        // The handles may name other attributes now: the stream ends (its consumer
        // subscribes again in the new layout), and no CCCD is written for it.
        let ended = try await withDeadline("the old subscription to end") {
            for await _ in values {}
            return true
        }
        #expect(ended)
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 0)
        let measurement = try #require(change?.database.characteristic(GATTUUID.heartRateMeasurement))
        let again = try await client.subscribe(to: measurement)
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 1)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
        withExtendedLifetime(again) {}
    }

    @Test func aSubscriptionEndedWhileItsCCCDWriteWasOutEndsToo() async throws {
        let (client, bearer) = makeGATT([
            step("12 0F 00 01 00", "13", held: true),
            step("12 0F 00 00 00", "13"),
            step("12 0F 00 01 00", "13"),
        ])
        let first = Task { try await client.subscribe(to: Self.measurement) }
        try await withDeadline("the first CCCD write") { await bearer.waitForSent(1) }
        // Ended while its write is out: it must not come back as a live subscription that
        // later turns off the CCCD of the one after it.
        let unsubscribed = Task { try await client.unsubscribe(from: Self.measurement) }
        // It ended the consumer, and waits for the write that is out before writing 0.
        try await withDeadline("the unsubscribe to end the consumer") {
            while await client.subscriberCount(valueHandle: 0x000E) > 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        bearer.release()
        let stale = try await first.value
        try await unsubscribed.value
        let ended = try await withDeadline("the stale stream to end") {
            for await _ in stale {}
            return true
        }
        #expect(ended)
        let second = try await client.subscribe(to: Self.measurement)
        #expect(await client.subscriberCount(valueHandle: 0x000E) == 1)
        try await Task.sleep(for: .milliseconds(200))  // a stale release would write 0 by now
        #expect(bearer.sent.count == 3)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
        withExtendedLifetime(second) {}
    }

    /// Service Changed names a CCCD whose write is out: the answer, when it comes, says
    /// nothing about the attribute the handle names now, so it is not taken as written,
    /// and subscribing in the new layout writes the CCCD.
    @Test func aCCCDWriteAnsweredAfterServiceChangedIsNotTakenAsWritten() async throws {
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [
            SampleServer.subscribeServiceChanged,
            step("12 0F 00 01 00", "13", held: true),
            step("1E"),
        ] + Self.heartRateRediscovered + [
            step("12 0F 00 01 00", "13"),
        ], timeout: heldStepTimeout)
        _ = try await client.discover()
        let sentBefore = bearer.sent.count
        let first = Task { try await client.subscribe(to: Self.measurement) }
        try await withDeadline("the CCCD write") { await bearer.waitForSent(sentBefore + 1) }
        let changes = client.databaseChanges
        bearer.inject("1D 08 00 0C 00 14 00")
        // Service Changed ended the subscription in flight...
        try await withDeadline("Service Changed to end the subscription") {
            while await client.subscriberCount(valueHandle: 0x000E) > 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        // ...and then the write is answered.
        bearer.release()
        let stale = try await first.value
        let change = try await withDeadline("the database change") {
            var iterator = changes.makeAsyncIterator()
            return await iterator.next()
        }
        let ended = try await withDeadline("the stale stream to end") {
            for await _ in stale {}
            return true
        }
        #expect(ended)
        let measurement = try #require(change?.database.characteristic(GATTUUID.heartRateMeasurement))
        let again = try await client.subscribe(to: measurement)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
        withExtendedLifetime(again) {}
    }

    @Test func aServiceChangedSubscriptionTheServerRefusedIsAskedForAgainNextTime() async throws {
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [
            // The CCCD needs encryption: refused, so the discovery fails with that code.
            step("12 09 00 02 00", "01 12 09 00 0F"),
            // After pairing the caller discovers again: the hash is unchanged, and the
            // subscription is asked for again rather than taken as done.
            SampleServer.readHash, SampleServer.subscribeServiceChanged,
        ])
        let refused = await gattError { () async throws(GATTError) in try await client.discover() }
        #expect(refused?.errorCode == .insufficientEncryption, "\(String(describing: refused))")
        _ = try await client.discover(remembered: SampleServer.database)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
    }

    @Test func aCachedReconnectWithAnUnchangedHashSendsNoDiscoveryRequest() async throws {
        let (client, bearer) = makeGATT([SampleServer.readHash, SampleServer.subscribeServiceChanged])
        let database = try await client.discover(remembered: SampleServer.database)
        #expect(database == SampleServer.database)
        #expect(bearer.sent.filter(isDiscoveryRequest).isEmpty)
        #expect(bearer.sent.count == 2)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func aCachedReconnectWithAChangedHashDiscoversAgain() async throws {
        let (client, bearer) = makeGATT([SampleServer.readOtherHash] + SampleServer.discovery + [SampleServer.subscribeServiceChanged])
        var remembered = SampleServer.database
        remembered.services.removeLast()
        let database = try await client.discover(remembered: remembered)
        #expect(database.services == SampleServer.database.services)
        #expect(database.databaseHash == Hex.bytes(SampleServer.otherHash))
        #expect(bearer.sent.filter(isDiscoveryRequest).count == 7)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func aRememberedDatabaseWithoutHashIsDiscoveredAgain() async throws {
        var remembered = SampleServer.database
        remembered.databaseHash = nil
        let (client, bearer) = makeGATT([SampleServer.readHash] + SampleServer.discovery + [SampleServer.subscribeServiceChanged])
        #expect(try await client.discover(remembered: remembered) == SampleServer.database)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }
}
