@testable import ATT
import BluetoothCore
import TestSupport
import Testing

/// How the client fails: deadlines, protocol violations, a vanishing bearer, cancellation,
/// and subscriptions that must not outlive their readers.
@Suite struct ClientFailureTests {
    @Test func silentPeerTimesOutAndKillsTheBearer() async throws {
        // Long enough that the second request is queued before the first times out even on
        // a loaded 2-thread pool: at 100 ms it sometimes was not, and at 2 s neither once the
        // deadline became punctual (a timer thread, not a sleeping task on that same pool)
        // beside CI's CPU-bound suites.
        let timeout = Duration.seconds(10)
        let (client, bearer) = makeClient([step("0A 03 00")], timeout: timeout)
        let watcher = CountWatcher(client.observeQueue)
        let stream = client.values()
        let first = Task { await attError { () async throws(ATTError) in try await client.read(3) } }
        try await withDeadline("the request on the wire") { await bearer.waitForSent(1) }
        let queued = Task { await attError { () async throws(ATTError) in try await client.read(4) } }
        try await withDeadline("the second request queued") { await watcher.wait(for: 1) }

        let firstError = try await withDeadline("the timeout", seconds: 40) { await first.value }
        #expect(firstError == .transactionTimedOut(request: .readRequest, timeout: timeout))
        let dead = ATTBearerError.transactionTimedOut(request: .readRequest)
        #expect(try await withDeadline("the queued request's failure") { await queued.value } == .bearerClosed(dead))
        #expect(bearer.closedWith == dead)  // the layer below is told to drop the link
        #expect(client.closedReason == dead)

        // Every later request fails at once, without touching the wire.
        #expect(await attError { () async throws(ATTError) in try await client.read(3) } == .bearerClosed(dead))
        #expect(await attError { () throws(ATTError) in try client.writeCommand(3, value: [1]) } == .bearerClosed(dead))
        #expect(await attError { () async throws(ATTError) in try await client.exchangeMTU() } == .bearerClosed(dead))
        #expect(bearer.sent.count == 1)
        // Subscriber streams end with the bearer.
        let ended = try await withDeadline("the stream's end") {
            for await _ in stream {}
            return true
        }
        #expect(ended)
        #expect(client.subscriberCount == 0)
    }

    @Test func aResponseWithTheWrongOpcodeIsAProtocolViolation() async throws {
        let (client, bearer) = makeClient([step("0A 03 00", "0D 01")])
        let error = await attError { () async throws(ATTError) in try await client.read(3) }
        #expect(error == .unexpectedResponse(request: .readRequest, received: .readBlobResponse))
        let violation = ATTBearerError.protocolViolation(request: .readRequest, received: .readBlobResponse)
        #expect(bearer.closedWith == violation)
        #expect(await attError { () async throws(ATTError) in try await client.read(3) } == .bearerClosed(violation))
    }

    @Test func anErrorResponseAboutAnotherRequestIsAProtocolViolation() async throws {
        let (client, bearer) = makeClient([step("0A 03 00", "01 12 03 00 01")])
        let error = await attError { () async throws(ATTError) in try await client.read(3) }
        #expect(error == .unexpectedResponse(request: .readRequest, received: .errorResponse))
        #expect(bearer.closedWith == .protocolViolation(request: .readRequest, received: .errorResponse))
    }

    @Test func aMalformedResponseFailsOnlyItsRequest() async throws {
        let (client, bearer) = makeClient([
            step("08 01 00 FF FF 03 28", "09 07 02 00 10"),
            step("0A 03 00", "0B 05"),
        ])
        let error = await attError { () async throws(ATTError) in
            try await client.readByType(0x0001...0xFFFF, type: BluetoothUUID(UInt16(0x2803)))
        }
        guard case .malformedResponse(.readByTypeRequest, _) = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(try await client.read(3).attributeValue == [5])
        #expect(bearer.closedWith == nil)
        #expect(client.statistics.malformedPDUs == 1)
    }

    @Test func aMalformedIndicationIsStillConfirmed() async throws {
        let (client, bearer) = makeClient([step("1E")])
        bearer.inject("1D 05")
        try await withDeadline("the confirmation") { await bearer.waitForSent(1) }
        #expect(bearer.sentHex == ["1E"])
        #expect(client.statistics.malformedPDUs == 1)
        #expect(client.statistics.valuesDelivered == 0)
    }

    @Test func unsolicitedResponsesAreCountedAndDropped() async throws {
        let (client, bearer) = makeClient([step("0A 03 00", "0B 05")])
        bearer.inject("0B 01")
        bearer.inject("")
        await bearer.drain()
        #expect(client.statistics.unsolicitedResponses == 1)
        #expect(client.statistics.malformedPDUs == 1)
        #expect(try await client.read(3).attributeValue == [5])
    }

    @Test func disconnectFailsEveryPendingAndQueuedRequestAtOnce() async throws {
        let (client, bearer) = makeClient([step("0A 01 00", "0B 01", held: true)])
        let watcher = CountWatcher(client.observeQueue)
        let stream = client.values(handle: 1)
        let requests = Task { await attError { () async throws(ATTError) in try await client.read(1) } }
        try await withDeadline("the request on the wire") { await bearer.waitForSent(1) }
        let second = Task { await attError { () async throws(ATTError) in try await client.read(2) } }
        try await withDeadline("queued 1") { await watcher.wait(for: 1) }
        let third = Task { await attError { () async throws(ATTError) in try await client.write(3, value: [1]) } }
        try await withDeadline("queued 2") { await watcher.wait(for: 2) }

        let reason = ATTBearerError.disconnected(reason: 0x13)
        bearer.disconnect(reason)
        for task in [requests, second, third] {
            #expect(try await withDeadline("a failed request") { await task.value } == .bearerClosed(reason))
        }
        #expect(client.pendingRequestCount == 0)
        #expect(client.closedReason == reason)
        #expect(await attError { () async throws(ATTError) in try await client.read(1) } == .bearerClosed(reason))
        #expect(try await withDeadline("the stream's end") { for await _ in stream {}; return true })
        #expect(bearer.sent.count == 1)
        // A response that straggles in after the disconnect changes nothing.
        bearer.release()
        await bearer.drain()
        #expect(client.closedReason == reason)
    }

    @Test func closingByHostFailsPendingRequests() async throws {
        let (client, bearer) = makeClient([step("0A 01 00", held: true)])
        let request = Task { await attError { () async throws(ATTError) in try await client.read(1) } }
        try await withDeadline("the request on the wire") { await bearer.waitForSent(1) }
        client.close()
        #expect(try await withDeadline("the failure") { await request.value } == .bearerClosed(.closedByHost))
        #expect(bearer.closedWith == .closedByHost)
    }

    @Test func aBearerThatFailsToSendFailsTheRequest() async throws {
        let (client, bearer) = makeClient([])
        bearer.close(reason: .failed("socket write: broken pipe"))
        let error = await attError { () async throws(ATTError) in try await client.read(1) }
        #expect(error == .bearerClosed(.failed("socket write: broken pipe")))
        #expect(client.closedReason == .failed("socket write: broken pipe"))
    }

    @Test func requestsLongerThanTheMTUAreRefusedBeforeSending() async throws {
        let (client, bearer) = makeClient([], mtu: 23)
        let long = await attError { () async throws(ATTError) in try await client.write(3, value: Array(repeating: 0, count: 21)) }
        #expect(long == .pduExceedsMTU(.writeRequest, length: 24, mtu: 23))
        let command = await attError { () throws(ATTError) in try client.writeCommand(3, value: Array(repeating: 0, count: 21)) }
        #expect(command == .pduExceedsMTU(.writeCommand, length: 24, mtu: 23))
        let notARequest = await attError { () async throws(ATTError) in try await client.send(request: .writeCommand(.init(attributeHandle: 1, attributeValue: []))) }
        guard case .invalidRequest = notARequest else { Issue.record("command accepted as a request"); return }
        let notACommand = await attError { () throws(ATTError) in try client.sendCommand(.readRequest(.init(attributeHandle: 1))) }
        guard case .invalidRequest = notACommand else { Issue.record("request accepted as a command"); return }
        #expect(await attError { () async throws(ATTError) in try await client.readMultiple([]) } != nil)
        #expect(bearer.sent.isEmpty)
    }

    @Test func cancellingAQueuedRequestRemovesItAndAnInFlightOneKeepsTheBearerBusy() async throws {
        let (client, bearer) = makeClient([
            step("0A 01 00", "0B 01", held: true),
            step("0A 03 00", "0B 03"),
        ])
        let watcher = CountWatcher(client.observeQueue)
        let inFlight = Task { await attError { () async throws(ATTError) in try await client.read(1) } }
        try await withDeadline("the request on the wire") { await bearer.waitForSent(1) }
        let queued = Task { await attError { () async throws(ATTError) in try await client.read(2) } }
        try await withDeadline("queued") { await watcher.wait(for: 1) }
        queued.cancel()
        #expect(try await withDeadline("the cancelled request") { await queued.value } == .cancelled(request: .readRequest))
        inFlight.cancel()
        #expect(try await withDeadline("the cancelled request") { await inFlight.value } == .cancelled(request: .readRequest))
        // The cancelled request is still unanswered on the wire: the next one waits for it.
        let next = Task { try await client.read(3) }
        try await withDeadline("next queued") { await watcher.wait(for: 1) }
        #expect(bearer.sent.count == 1)
        bearer.release()
        #expect(try await withDeadline("the next read") { try await next.value.attributeValue } == [3])
        #expect(bearer.sentHex == ["0A 01 00", "0A 03 00"])
        #expect(bearer.failures.isEmpty)
    }

    @Test func subscriptionsDoNotLeak() async throws {
        let (client, bearer) = makeClient([])
        // A stream dropped without being read.
        do { _ = client.values(handle: 1) }
        #expect(client.subscriberCount == 0)
        // A stream whose reading task is cancelled.
        let stream = client.values(handle: 2)
        #expect(client.subscriberCount == 1)
        let reader = Task { for await _ in stream {} }
        reader.cancel()
        await reader.value
        #expect(client.subscriberCount == 0)
        // Handlers: cancelled explicitly, or released.
        let handler = client.addValueHandler(handle: 3) { _ in }
        #expect(client.subscriberCount == 1)
        handler.cancel()
        #expect(client.subscriberCount == 0)
        do { _ = client.addValueHandler(handle: 4) { _ in } }
        #expect(client.subscriberCount == 0)
        // Nothing is delivered to what was removed, and the stream count stays zero.
        bearer.inject("1B 02 00 01")
        await bearer.drain()
        #expect(client.statistics.valuesDelivered == 0)
        // After the bearer is gone, new subscriptions end at once and register nothing.
        bearer.disconnect(.disconnected(reason: 0x08))
        await bearer.drain()
        let late = client.values()
        #expect(try await withDeadline("the late stream's end") { for await _ in late {}; return true })
        #expect(client.subscriberCount == 0)
    }

    @Test func errorTextsSayWhatHappenedAndWhatToDo() {
        #expect(ATTError.errorResponse(request: .readRequest, handle: 0x0203, code: .insufficientEncryption).description
            == "the server refused Read Request at handle 0x0203: Insufficient Encryption (0x0F)")
        #expect(ATTError.transactionTimedOut(request: .writeRequest, timeout: .seconds(30)).description.contains("reconnect"))
        #expect(ATTError.pduExceedsMTU(.writeRequest, length: 30, mtu: 23).description.contains("Prepare Write"))
        #expect(ATTBearerError.disconnected(reason: 0x13).description == "the link was disconnected (HCI reason 0x13)")
    }
}
