@testable import ATT
import BluetoothCore
import TestSupport
import Testing

/// The client against scripted servers: each test is a table of (client sends, server
/// answers) PDUs, as in BlueZ's unit/test-gatt.c.
@Suite struct ClientConversationTests {
    // MARK: Exchange MTU

    @Test(arguments: [
        // (client offers, server answers, agreed)
        (UInt16(517), "03 40 00", UInt16(64)),  // server smaller
        (UInt16(100), "03 05 02", UInt16(100)),  // server larger
        (UInt16(517), "03 10 00", UInt16(23)),  // server below 23: 23 still holds
        (UInt16(23), "03 17 00", UInt16(23)),
    ])
    func exchangeMTU(_ offer: UInt16, _ answer: String, _ agreed: UInt16) async throws {
        let request = Hex.string(ExchangeMTURequest(clientRxMTU: offer).encode(), separator: " ")
        let (client, bearer) = makeClient([step(request, answer)])
        let mtu = try await client.exchangeMTU(clientRxMTU: offer)
        #expect(mtu == agreed)
        #expect(bearer.mtu == agreed)
        #expect(client.mtu == agreed)
        #expect(bearer.scriptFinished)
        #expect(bearer.failures.isEmpty)
    }

    @Test func exchangeMTUDefaultsTo517AndHappensOnce() async throws {
        let (client, bearer) = makeClient([step("02 05 02", "03 05 02")])
        #expect(try await client.exchangeMTU() == 517)
        let again = await attError { () async throws(ATTError) in try await client.exchangeMTU() }
        guard case .invalidRequest = again else { Issue.record("second exchange: \(String(describing: again))"); return }
        #expect(bearer.sent.count == 1)
        let tooSmall = await attError { () async throws(ATTError) in try await client.exchangeMTU(clientRxMTU: 22) }
        guard case .invalidRequest = tooSmall else { Issue.record("MTU 22 accepted"); return }
    }

    @Test func anExchangeMTUWhoseCallerGaveUpStillSetsTheMTUTheServerNowUses() async throws {
        // Sent, then its caller cancelled: the server still takes min(100, 517), so the
        // link's ATT_MTU is 100 whether anyone waits for the answer or not.
        let (client, bearer) = makeClient([step("02 64 00", "03 05 02", held: true), step("0A 03 00", "0B 01")])
        let exchange = Task { try await client.exchangeMTU(clientRxMTU: 100) }
        try await withDeadline("the exchange on the wire") { await bearer.waitForSent(1) }
        exchange.cancel()
        _ = await exchange.result
        bearer.release()
        #expect(try await withDeadline("the next request") { try await client.read(3) }.attributeValue == [0x01])
        #expect(bearer.mtu == 100)
        // Sent once: it is not sent again.
        let again = await attError { () async throws(ATTError) in try await client.exchangeMTU() }
        guard case .invalidRequest = again else { Issue.record("second exchange: \(String(describing: again))"); return }

        // Withdrawn before it went out (another request on the wire): nothing was agreed,
        // and it may still be sent.
        let (queued, held) = makeClient([step("0A 03 00", "0B 01", held: true), step("02 64 00", "03 64 00")])
        let read = Task { try await queued.read(3) }
        try await withDeadline("the read on the wire") { await held.waitForSent(1) }
        let withdrawn = Task { try await queued.exchangeMTU(clientRxMTU: 100) }
        try await withDeadline("the exchange queued") { while queued.pendingRequestCount < 2 { await Task.yield() } }
        withdrawn.cancel()
        _ = await withdrawn.result
        held.release()
        _ = try await read.value
        #expect(try await withDeadline("the exchange sent now") { try await queued.exchangeMTU(clientRxMTU: 100) } == 100)
        #expect(held.failures.isEmpty)
    }

    @Test func exchangeMTUIsNotSentWhenTheLayerBelowDecides() async throws {
        let bearer = ScriptedBearer([], mtu: 247, mtuIsNegotiatedBelow: true)
        let client = ATTClient(bearer: bearer)
        #expect(try await client.exchangeMTU() == 247)
        #expect(bearer.sent.isEmpty)
    }

    // MARK: Procedures' building blocks

    @Test func discoverPrimaryServicesConversation() async throws {
        let (client, bearer) = makeClient([
            step("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 06 00 09 00 01 18"),
            step("10 0A 00 FF FF 00 28", "11 14 0A 00 FF FF \(sampleUUID128Hex)"),
            step("10 00 00 FF FF 00 28", "01 10 00 00 0A"),
        ])
        let first = try await client.readByGroupType(0x0001...0xFFFF, type: BluetoothUUID(UInt16(0x2800)))
        #expect(first.attributeDataList.map(\.endGroupHandle) == [5, 9])
        let second = try await client.readByGroupType(0x000A...0xFFFF, type: BluetoothUUID(UInt16(0x2800)))
        #expect(try BluetoothUUID(littleEndian: second.attributeDataList[0].attributeValue) == sampleUUID128)
        let end = await attError { () async throws(ATTError) in
            try await client.readByGroupType(0x0000...0xFFFF, type: BluetoothUUID(UInt16(0x2800)))
        }
        #expect(end == .errorResponse(request: .readByGroupTypeRequest, handle: 0x0000, code: .attributeNotFound))
        #expect(bearer.failures.isEmpty)
        #expect(bearer.scriptFinished)
    }

    @Test func everyRequestHelperSendsItsPDUAndReturnsItsResponse() async throws {
        let (client, bearer) = makeClient([
            step("04 01 00 FF FF", "05 01 01 00 00 28"),
            step("06 01 00 FF FF 00 28 0D 18", "07 01 00 05 00"),
            step("08 01 00 05 00 03 28", "09 07 02 00 10 03 00 0D 2A"),
            step("0A 03 00", "0B 48 69"),
            step("0C 03 00 16 00", "0D 21"),
            step("0E 03 00 05 00", "0F 01 02 03"),
            step("20 03 00 05 00", "21 01 00 AA 00 00"),
            step("12 03 00 01 00", "13"),
            step("16 03 00 00 00 41 42", "17 03 00 00 00 41 42"),
            step("18 01", "19"),
            step("18 00", "19"),
        ], mtu: 64)
        #expect(try await client.findInformation(0x0001...0xFFFF).informationData == [.init(handle: 1, type: BluetoothUUID(UInt16(0x2800)))])
        #expect(try await client.findByTypeValue(0x0001...0xFFFF, type: 0x2800, value: [0x0D, 0x18]).handlesInformationList.count == 1)
        #expect(try await client.readByType(0x0001...0x0005, type: BluetoothUUID(UInt16(0x2803))).attributeDataList[0].attributeHandle == 2)
        #expect(try await client.read(3).attributeValue == Array("Hi".utf8))
        #expect(try await client.readBlob(3, offset: 22).partAttributeValue == [0x21])
        #expect(try await client.readMultiple([3, 5]).setOfValues == [1, 2, 3])
        #expect(try await client.readMultipleVariable([3, 5]).lengthValueTupleList.map(\.attributeValue) == [[0xAA], []])
        try await client.write(3, value: [1, 0])
        #expect(try await client.prepareWrite(3, offset: 0, value: [0x41, 0x42]).partAttributeValue == [0x41, 0x42])
        try await client.executeWrite(.immediatelyWriteAllPendingPreparedValues)
        try await client.executeWrite(.cancelAllPreparedWrites)
        #expect(bearer.failures.isEmpty)
        #expect(bearer.scriptFinished)
        #expect(client.pendingRequestCount == 0)
    }

    @Test func commandsGoOutAtOnceEvenWithARequestOutstanding() async throws {
        let signature = Array(repeating: UInt8(0x5A), count: 12)
        let (client, bearer) = makeClient([
            step("0A 03 00", "0B 01", held: true),
            step("52 04 00 01"),
            step("D2 04 00 02 " + Hex.string(signature, separator: " ")),
        ])
        let read = Task { try await client.read(3) }
        try await withDeadline("the read on the wire") { await bearer.waitForSent(1) }
        try client.writeCommand(4, value: [1])
        try client.signedWriteCommand(try SignedWriteCommand(attributeHandle: 4, attributeValue: [2], authenticationSignature: signature))
        #expect(bearer.sent.count == 3)
        bearer.release()
        #expect(try await read.value.attributeValue == [1])
        #expect(bearer.failures.isEmpty)
    }

    // MARK: Sequential transactions

    @Test func queuedRequestsGoOutOneAtATimeInArrivalOrder() async throws {
        let (client, bearer) = makeClient([
            step("0A 01 00", "0B 11", held: true),
            step("0A 02 00", "0B 22"),
            step("0A 03 00", "0B 33"),
        ])
        let watcher = CountWatcher(client.observeQueue)
        let first = Task { try await client.read(1) }
        try await withDeadline("the first request") { await bearer.waitForSent(1) }
        let second = Task { try await client.read(2) }
        try await withDeadline("the second request queued") { await watcher.wait(for: 1) }
        let third = Task { try await client.read(3) }
        try await withDeadline("the third request queued") { await watcher.wait(for: 2) }
        // Nothing but the first is on the wire while its response is held.
        #expect(bearer.sent.count == 1)
        #expect(client.pendingRequestCount == 3)
        bearer.release()
        #expect(try await first.value.attributeValue == [0x11])
        #expect(try await second.value.attributeValue == [0x22])
        #expect(try await third.value.attributeValue == [0x33])
        #expect(bearer.sentHex == ["0A 01 00", "0A 02 00", "0A 03 00"])
        #expect(bearer.failures.isEmpty)  // includes "no request while another is unanswered"
    }

    @Test func errorResponseBecomesATypedErrorAndTheBearerStaysUsable() async throws {
        let (client, bearer) = makeClient([
            step("0A 03 00", "01 0A 03 00 0F"),
            step("12 04 00 01", "01 12 04 00 80"),
            step("0A 03 00", "0B 07"),
        ])
        let error = await attError { () async throws(ATTError) in try await client.read(3) }
        #expect(error == .errorResponse(request: .readRequest, handle: 3, code: .insufficientEncryption))
        #expect(error?.errorCode == .insufficientEncryption)
        let application = await attError { () async throws(ATTError) in try await client.write(4, value: [1]) }
        #expect(application?.errorCode?.isApplicationError == true)
        #expect(try await client.read(3).attributeValue == [7])
        #expect(client.closedReason == nil)
        #expect(bearer.failures.isEmpty)
    }

    // MARK: Server-initiated PDUs

    @Test func indicationDuringARequestIsDeliveredThenConfirmedAndTheRequestCompletes() async throws {
        let (client, bearer) = makeClient([
            step("0A 03 00", "0B 01 02", held: true),
            step("1E"),
        ])
        let seen = Collected<(ATTHandleValue, Int)>()
        let subscription = client.addValueHandler(handle: 5) { value in
            seen.append((value, bearer.sent.count))  // how much was sent when the value arrived
        }
        let read = Task { try await client.read(3) }
        try await withDeadline("the read on the wire") { await bearer.waitForSent(1) }
        bearer.inject("1D 05 00 AA")
        try await withDeadline("the confirmation") { await bearer.waitForSent(2) }
        #expect(seen.all.map(\.0) == [ATTHandleValue(handle: 5, value: [0xAA], isIndication: true)])
        #expect(seen.all.map(\.1) == [1])  // handed out before the confirmation went
        #expect(bearer.sentHex == ["0A 03 00", "1E"])
        bearer.release()
        #expect(try await read.value.attributeValue == [1, 2])
        #expect(client.statistics.indicationsConfirmed == 1)
        #expect(bearer.failures.isEmpty)
        subscription.cancel()
    }

    @Test func notificationsReachOnlyTheSubscribersOfTheirHandle() async throws {
        let (client, bearer) = makeClient([])
        let five = client.values(handle: 5)
        let seven = Collected<ATTHandleValue>()
        let everything = Collected<ATTHandleValue>()
        let sevenSubscription = client.addValueHandler(handle: 7) { seven.append($0) }
        let allSubscription = client.addValueHandler { everything.append($0) }
        bearer.inject("1B 05 00 01")
        bearer.inject("1B 07 00 02")
        bearer.inject("1B 09 00 03")
        bearer.inject("1B 05 00 04")
        await bearer.drain()
        #expect(seven.all == [ATTHandleValue(handle: 7, value: [2], isIndication: false)])
        #expect(everything.all.map(\.handle) == [5, 7, 9, 5])
        let fromStream = try await withDeadline("two values for handle 5") {
            var values: [[UInt8]] = []
            for await value in five {
                values.append(value.value)
                if values.count == 2 { break }
            }
            return values
        }
        #expect(fromStream == [[1], [4]])
        #expect(bearer.sent.isEmpty)  // notifications are never confirmed
        sevenSubscription.cancel()
        allSubscription.cancel()
    }

    @Test func multipleHandleValueNotificationIsSplitByHandle() async throws {
        let (client, bearer) = makeClient([])
        let five = Collected<[UInt8]>()
        let seven = Collected<[UInt8]>()
        let a = client.addValueHandler(handle: 5) { five.append($0.value) }
        let b = client.addValueHandler(handle: 7) { seven.append($0.value) }
        bearer.inject("23 05 00 01 00 AA 07 00 02 00 BB CC 05 00 00 00")
        await bearer.drain()
        #expect(five.all == [[0xAA], []])
        #expect(seven.all == [[0xBB, 0xCC]])
        #expect(bearer.sent.isEmpty)
        a.cancel()
        b.cancel()
    }

    @Test func unknownAndPeerRequestPDUsAreIgnoredNeverAnswered() async throws {
        let (client, bearer) = makeClient([step("0A 03 00", "0B 09")])
        bearer.inject("3F 01 02")  // unknown request
        bearer.inject("7F")  // unknown command
        bearer.inject("0A 01 00")  // a Read Request for a server we do not run
        bearer.inject("52 01 00 01")  // a Write Command
        await bearer.drain()
        #expect(bearer.sent.isEmpty)  // in particular, no Error Response to anything
        #expect(client.statistics.ignoredPDUs == 4)
        #expect(try await client.read(3).attributeValue == [9])
    }

    @Test func peerRequestsGoToTheServerHandlerWhenThereIsOne() async throws {
        let received = Collected<ATTPDU>()
        let (client, bearer) = makeClient([], serverPDUHandler: { received.append($0) })
        bearer.inject("0A 01 00")
        bearer.inject("1E")
        await bearer.drain()
        #expect(received.all == [.readRequest(.init(attributeHandle: 1)), .handleValueConfirmation(.init())])
        #expect(client.statistics.ignoredPDUs == 0)
    }
}
