@testable import ATT
import BluetoothCore
import Testing
import TestSupport

/// Every request, and every error code, as a scripted conversation with the server (Core 5.4
/// Vol 3 Part F 3.4): request hex in, the response hex the specification requires out.
/// The database is ``InMemoryAttributeStore/testDatabase()``; ATT_MTU 23 unless a test says otherwise.
@Suite struct ServerConversationTests {
    static let uuid = ServerFixture.uuid128

    @Test func exchangeMTUAnswersOurReceiveMTUAndOnlyTheFirstChangesTheMTU() async throws {
        let fixture = ServerFixture()
        try await fixture.converse([("02 F7 00", "03 05 02")])
        #expect(fixture.bearer.mtu == 247)
        try await fixture.converse([("02 00 02", "03 05 02")])
        #expect(fixture.bearer.mtu == 247)
    }

    /// The MTU is told once, as it is in effect: a second exchange asking for more changes
    /// nothing and is not told (the peripheral manager told the second's 512 as the MTU).
    @Test func theMTUInEffectIsToldOnceAtTheFirstExchange() async throws {
        let fixture = ServerFixture()
        let told = Lock<[UInt16]>([])
        fixture.server.observeMTU { mtu in told.withLock { $0.append(mtu) } }
        try await fixture.converse([("02 17 00", "03 05 02"), ("02 00 02", "03 05 02")])
        #expect(told.withLock { $0 } == [23])
        #expect(fixture.bearer.mtu == 23)
    }

    @Test func exchangeMTUNeverGoesBelow23() async throws {
        let fixture = ServerFixture()
        try await fixture.converse([("02 10 00", "03 05 02")])
        #expect(fixture.bearer.mtu == 23)
    }

    @Test func findInformationPacksOneFormatIntoTheMTU() async throws {
        try await ServerFixture().converse([
            // Five 16-bit entries fill (23 - 2) / 4.
            ("04 01 00 FF FF", "05 01 01 00 00 28 02 00 03 28 03 00 00 2A 04 00 03 28 05 00 01 2A"),
            // The list stops before the first 128-bit type...
            ("04 06 00 FF FF", "05 01 06 00 00 28 07 00 03 28"),
            // ...which then goes alone in format 2.
            ("04 08 00 FF FF", "05 02 08 00 \(Self.uuid)"),
            ("04 00 00 FF FF", "01 04 00 00 01"),
            ("04 05 00 04 00", "01 04 05 00 01"),
            ("04 14 00 FF FF", "01 04 14 00 0A"),
        ])
    }

    @Test func findByTypeValueMatchesReadableValuesOnly() async throws {
        try await ServerFixture().converse([
            ("06 01 00 FF FF 00 28 0F 18", "07 0C 00 10 00"),
            ("06 01 00 FF FF 00 28 00 18", "07 01 00 05 00"),
            // An attribute that is no group ends at itself.
            ("06 01 00 FF FF 00 2A 42 61 72 65 42 4C 45", "07 03 00 03 00"),
            ("06 01 00 FF FF 00 28 AA BB", "01 06 01 00 0A"),
            // 0x000A holds 0x64 but needs encryption: not found on an open link.
            ("06 01 00 FF FF 19 2A 64", "01 06 01 00 0A"),
            ("06 00 00 FF FF 00 28 00 18", "01 06 00 00 01"),
        ])
    }

    @Test func readByTypeStopsAtAnotherLengthAndCutsLongValues() async throws {
        try await ServerFixture().converse([
            ("08 01 00 FF FF 03 28", "09 07 02 00 02 03 00 00 2A 04 00 0A 05 00 01 2A"),
            ("08 05 00 FF FF 03 28", "09 15 07 00 1A 08 00 \(Self.uuid)"),
            // A 100-octet value cut to ATT_MTU - 4.
            ("08 08 00 08 00 \(Self.uuid)", "09 15 08 00 \(sequenceHex(19))"),
            ("08 14 00 FF FF 03 28", "01 08 14 00 0A"),
            // The first match needs encryption: its error is the answer.
            ("08 0A 00 FF FF 19 2A", "01 08 0A 00 05"),
            ("08 00 00 FF FF 03 28", "01 08 00 00 01"),
        ])
    }

    @Test func readByTypeReturnsTheValuesBeforeTheFirstRefusedOne() async throws {
        let fixture = ServerFixture(security: .init(isEncrypted: true, keySize: 16))
        // 0x000A and 0x000B need encryption (granted), 0x000D authentication (not).
        try await fixture.converse([("08 0A 00 FF FF 19 2A", "09 03 0A 00 64 0B 00 63")])
    }

    @Test func readByGroupTypeServesServicesOnly() async throws {
        let primary128 = "FB 34 9B 5F 80 00 00 80 00 10 00 00 00 28 00 00"
        try await ServerFixture().converse([
            ("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18"),
            ("10 06 00 FF FF 00 28", "11 14 06 00 0B 00 \(Self.uuid)"),
            ("10 0C 00 FF FF 00 28", "11 06 0C 00 10 00 0F 18"),
            ("10 0D 00 FF FF 00 28", "01 10 0D 00 0A"),
            ("10 01 00 FF FF 01 28", "11 06 11 00 13 00 0A 18"),
            ("10 01 00 FF FF \(primary128)", "11 06 01 00 05 00 00 18"),
            ("10 01 00 FF FF 03 28", "01 10 01 00 10"),
            ("10 02 00 01 00 00 28", "01 10 02 00 01"),
        ])
    }

    @Test func readAndItsErrors() async throws {
        try await ServerFixture().converse([
            ("0A 03 00", "0B 42 61 72 65 42 4C 45"),
            ("0A 08 00", "0B \(sequenceHex(22))"),
            ("0A 00 00", "01 0A 00 00 01"),
            ("0A 50 00", "01 0A 50 00 01"),
            ("0A 12 00", "01 0A 12 00 02"),
        ])
    }

    @Test func readBlobFromAnOffsetAndInvalidOffset() async throws {
        try await ServerFixture().converse([
            ("0C 08 00 16 00", "0D \(sequenceHex(22, from: 22))"),
            ("0C 08 00 58 00", "0D \(sequenceHex(12, from: 88))"),
            ("0C 08 00 64 00", "0D"),
            ("0C 08 00 65 00", "01 0C 08 00 07"),
            ("0C 12 00 00 00", "01 0C 12 00 02"),
            ("0C 00 00 00 00", "01 0C 00 00 01"),
        ])
    }

    @Test func readMultipleFailsAsAWholeOnTheFirstError() async throws {
        try await ServerFixture().converse([
            ("0E 03 00 05 00", "0F 42 61 72 65 42 4C 45 00 00"),
            ("0E 03 00 08 00", "0F 42 61 72 65 42 4C 45 \(sequenceHex(15))"),
            ("0E 03 00 12 00", "01 0E 12 00 02"),
            // Already past the MTU at the first value; the bad handle still fails it all.
            ("0E 08 00 50 00", "01 0E 50 00 01"),
        ])
    }

    @Test func readMultipleVariableGivesEachLengthAndCutsTheList() async throws {
        try await ServerFixture().converse([
            ("20 03 00 05 00", "21 07 00 42 61 72 65 42 4C 45 02 00 00 00"),
            ("20 03 00 08 00", "21 07 00 42 61 72 65 42 4C 45 64 00 \(sequenceHex(11))"),
            ("20 0A 00 03 00", "01 20 0A 00 05"),
            ("20 03 00 00 00", "01 20 00 00 01"),
        ])
    }

    @Test func writeRequestAndItsErrors() async throws {
        let fixture = ServerFixture()
        fixture.store.refuse([0xFF, 0xFF], at: 0x0009, with: .valueNotAllowed)
        try await fixture.converse([
            ("12 05 00 34 12", "13"),
            ("12 13 00 01", "01 12 13 00 03"),
            ("12 50 00 01", "01 12 50 00 01"),
            ("12 0B 00 01", "01 12 0B 00 05"),
            ("12 09 00 FF FF", "01 12 09 00 13"),
        ])
        #expect(fixture.store.value(at: 0x0005) == [0x34, 0x12])
        #expect(fixture.store.writes == [.init(handle: 0x0005, value: [0x34, 0x12], kind: .request, bearer: 0x0040)])
    }

    @Test func writeRequestPast512OctetsIsInvalidAttributeValueLength() async throws {
        let fixture = ServerFixture(mtu: 517)
        try await fixture.converse([
            ("12 08 00 \(sequenceHex(513))", "01 12 08 00 0D"),
            ("12 08 00 \(sequenceHex(512))", "13"),
        ])
        #expect(fixture.store.value(at: 0x0008)?.count == 512)
    }

    @Test func longWriteThroughPrepareAndExecute() async throws {
        let fixture = ServerFixture()
        try await fixture.converse([
            ("16 08 00 00 00 \(sequenceHex(18, from: 0xA0))", "17 08 00 00 00 \(sequenceHex(18, from: 0xA0))"),
            ("16 08 00 12 00 \(sequenceHex(18, from: 0xB2))", "17 08 00 12 00 \(sequenceHex(18, from: 0xB2))"),
            ("18 01", "19"),
        ])
        #expect(fixture.store.value(at: 0x0008) == Hex.bytes(sequenceHex(36, from: 0xA0)))
        #expect(fixture.store.writes.map(\.kind) == [.reliable])
    }

    @Test func executeWriteCancelsAndChecksOffsetsAndLengths() async throws {
        let fixture = ServerFixture(mtu: 517)
        try await fixture.converse([
            ("16 05 00 00 00 AA", "17 05 00 00 00 AA"),
            ("18 00", "19"),
            // Offset 3 is past the 2-octet value: found at execute time.
            ("16 05 00 03 00 AA", "17 05 00 03 00 AA"),
            ("18 01", "01 18 05 00 07"),
            // Within the current value it overwrites in place.
            ("16 05 00 01 00 AA", "17 05 00 01 00 AA"),
            ("18 01", "19"),
            ("16 08 00 00 00 \(sequenceHex(300))", "17 08 00 00 00 \(sequenceHex(300))"),
            ("16 08 00 2C 01 \(sequenceHex(300))", "17 08 00 2C 01 \(sequenceHex(300))"),
            ("18 01", "01 18 08 00 0D"),
            ("18 01", "19"),
            ("18 02", "01 18 00 00 04"),
            ("16 13 00 00 00 01", "01 16 13 00 03"),
            ("16 00 00 00 00 01", "01 16 00 00 01"),
            ("16 0B 00 00 00 01", "01 16 0B 00 05"),
        ])
        #expect(fixture.store.value(at: 0x0005) == [0x00, 0xAA])
        #expect(fixture.store.value(at: 0x0008) == (0..<100).map { UInt8($0) })
    }

    /// The database changed between Prepare and Execute (Part G 7.1: the application may
    /// add or remove services at any time): the attribute now at 0x0008 needs encryption to
    /// be written. The queued part was checked against the one before; writing it into the
    /// new one would pass round its permission. Execute answers Invalid Handle and writes
    /// nothing.
    @Test func executeWriteWritesOnlyTheAttributesThePartsWerePreparedFor() async throws {
        let fixture = ServerFixture()
        try await fixture.converse([("16 08 00 00 00 AA BB", "17 08 00 00 00 AA BB")])
        let protected = ATTAttribute(handle: 0x0008, type: BluetoothUUID(UInt16(0x2A19)), permissions: .init(read: .init(protection: .encryption), write: .init(protection: .encryption)))
        fixture.store.add(protected, value: [0x01])
        try await fixture.converse([("18 01", "01 18 08 00 01")])
        #expect(fixture.store.value(at: 0x0008) == [0x01])
        #expect(fixture.store.writes.isEmpty)
        // The queue is empty afterwards, as after any Execute.
        try await fixture.converse([("18 01", "19")])
    }

    @Test func prepareQueueFullAtTheQuota() async throws {
        let fixture = ServerFixture()
        let prepares = (0..<32).map { index in
            (request: "16 05 00 00 00 \(sequenceHex(1, from: index))", response: "17 05 00 00 00 \(sequenceHex(1, from: index))")
        }
        try await fixture.converse(prepares + [("16 05 00 00 00 FF", "01 16 05 00 09")])
        // Executing empties the queue: the last part prepared wins.
        try await fixture.converse([("18 01", "19"), ("16 05 00 00 00 FF", "17 05 00 00 00 FF")])
        #expect(fixture.store.value(at: 0x0005) == [31])
    }

    @Test func prepareQueueFullAtTheByteQuota() async throws {
        var configuration = ATTServer.Configuration()
        configuration.prepareQueueBytes = 20
        let fixture = ServerFixture(configuration: configuration)
        try await fixture.converse([
            ("16 08 00 00 00 \(sequenceHex(18))", "17 08 00 00 00 \(sequenceHex(18))"),
            ("16 08 00 12 00 \(sequenceHex(3))", "01 16 08 00 09"),
            ("16 08 00 12 00 \(sequenceHex(2))", "17 08 00 12 00 \(sequenceHex(2))"),
        ])
    }

    @Test(arguments: [
        // (security, handle, the expected Error Code, or 0x00 when the value comes back)
        (ATTLinkSecurity.open, UInt16(0x000A), UInt8(0x05)),
        (ATTLinkSecurity(hasLongTermKey: true), 0x000A, 0x0F),
        (ATTLinkSecurity(isEncrypted: true, keySize: 16), 0x000A, 0x00),
        (ATTLinkSecurity(isEncrypted: true, keySize: 16), 0x000D, 0x05),
        (ATTLinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 16), 0x000D, 0x00),
        (ATTLinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 16), 0x000E, 0x05),
        (ATTLinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16), 0x000E, 0x00),
        (ATTLinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 7), 0x000F, 0x0C),
        (ATTLinkSecurity(isEncrypted: true, keySize: 16), 0x000F, 0x00),
        (ATTLinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16), 0x0010, 0x08),
    ])
    func securityErrorCodes(security: ATTLinkSecurity, handle: UInt16, code: UInt8) async throws {
        let fixture = ServerFixture(security: security)
        let request = "0A \(Hex.string([UInt8(handle & 0xFF), UInt8(handle >> 8)], separator: " "))"
        let value = fixture.store.value(at: handle) ?? []
        let expected = code == 0
            ? "0B \(Hex.string(value, separator: " "))"
            : "01 \(request) \(Hex.string([code]))"
        try await fixture.converse([(request, expected)])
    }

    @Test func securityFollowsTheLinkAndAuthorizationTheStore() async throws {
        let fixture = ServerFixture()
        try await fixture.converse([("0A 0A 00", "01 0A 0A 00 05"), ("0A 10 00", "01 0A 10 00 08")])
        fixture.server.updateSecurity(.init(isEncrypted: true, keySize: 16))
        fixture.store.setAuthorization(nil, for: 0x0010)
        try await fixture.converse([("0A 0A 00", "0B 64"), ("0A 10 00", "0B 5F")])
    }

    @Test func unknownRequestsAreNotSupported() async throws {
        try await ServerFixture().converse([
            ("3F", "01 3F 00 00 06"),
            ("22 01 02", "01 22 00 00 06"),
        ])
    }

    @Test func databaseOutOfSyncAnswersRequestsAndDropsCommands() async throws {
        let fixture = ServerFixture()
        fixture.store.setAdmission(.databaseOutOfSync)
        fixture.bearer.inject("52 05 00 01 02")
        try await fixture.converse([("0A 03 00", "01 0A 03 00 12"), ("10 01 00 FF FF 00 28", "01 10 01 00 12")])
        #expect(fixture.store.writes.isEmpty)
        #expect(fixture.server.statistics.commandsRefused == 1)
        #expect(fixture.bearer.sent.count == 2)
    }

    @Test func commandsAreNeverAnswered() async throws {
        let fixture = ServerFixture()
        try await fixture.sendUnanswered([
            "52 05 00 AA BB",  // performed
            "52 13 00 01",  // not permitted
            "52 50 00 01",  // no such handle
            "52 0B 00 01",  // needs encryption
            "52 00 00 01",  // handle 0
            "7F 01 02",  // unknown command
            "52 05",  // malformed
        ])
        #expect(fixture.store.value(at: 0x0005) == [0xAA, 0xBB])
        #expect(fixture.store.writes == [.init(handle: 0x0005, value: [0xAA, 0xBB], kind: .command, bearer: 0x0040)])
        let statistics = fixture.server.statistics
        #expect(statistics.commandsPerformed == 1)
        #expect(statistics.commandsRefused == 4)
        #expect(statistics.commandsIgnored == 2)
        #expect(statistics.errorResponsesSent == 0)
    }

    @Test func signedWritesNeedAVerifiedSignature() async throws {
        let signature = "01 00 00 00 11 22 33 44 55 66 77 5A"
        let forged = "01 00 00 00 11 22 33 44 55 66 77 00"
        // The signing key's pairing gave an encrypted-strength key: enough for 0x000B.
        let verifier: ATTSignatureVerifier = { command, _ in
            command.authenticationSignature.last == 0x5A ? ATTLinkSecurity(isEncrypted: true, keySize: 16) : nil
        }
        let fixture = ServerFixture(verifier: verifier)
        try await fixture.sendUnanswered(["D2 05 00 AA BB \(signature)", "D2 0B 00 07 \(signature)", "D2 05 00 CC \(forged)"])
        #expect(fixture.store.value(at: 0x0005) == [0xAA, 0xBB])
        #expect(fixture.store.value(at: 0x000B) == [0x07])
        #expect(fixture.server.statistics.signedWritesRejected == 1)
        #expect(fixture.server.statistics.commandsPerformed == 2)

        let unbonded = ServerFixture()
        try await unbonded.sendUnanswered(["D2 05 00 AA BB \(signature)"])
        #expect(unbonded.store.writes.isEmpty)
        #expect(unbonded.server.statistics.signedWritesRejected == 1)
    }

    @Test func notificationsAreCutToTheMTU() async throws {
        let fixture = ServerFixture()
        try fixture.server.notify(handle: 0x0003, value: Hex.bytes(sequenceHex(30))!)
        try fixture.server.notify(handle: 0x0005, value: [])
        #expect(fixture.bearer.sentHex == ["1B 03 00 \(sequenceHex(20))", "1B 05 00"])
    }

    @Test func multipleHandleValueNotificationOnlyWhenEnabledAndWholeTuples() async throws {
        let fixture = ServerFixture()
        let values: [MultipleHandleValueNotification.HandleLengthValue] = [
            .init(attributeHandle: 0x0003, attributeValue: [0xAA, 0xBB]),
            .init(attributeHandle: 0x0005, attributeValue: [0xCC]),
            .init(attributeHandle: 0x0008, attributeValue: Hex.bytes(sequenceHex(20))!),
        ]
        #expect(throws: ATTServerError.multipleNotificationsNotEnabled) { try fixture.server.notifyMultiple(values) }
        fixture.store.multipleNotificationsAccepted = true
        #expect(try fixture.server.notifyMultiple(values) == 2)
        // Two or more tuples (3.4.7.4): a value that fits only alone goes as a notification.
        #expect(try fixture.server.notifyMultiple(Array(values.suffix(2))) == 1)
        #expect(try fixture.server.notifyMultiple(Array(values.suffix(1)) + values) == 1)
        #expect(throws: ATTServerError.nothingToSend) { try fixture.server.notifyMultiple([]) }
        #expect(fixture.bearer.sentHex == [
            "23 03 00 02 00 AA BB 05 00 01 00 CC", "1B 05 00 CC", "1B 08 00 \(sequenceHex(20))",
        ])
    }

    @Test func indicationsGoOneAtATimeAndReturnOnConfirmation() async throws {
        let fixture = ServerFixture()
        let server = fixture.server, bearer = fixture.bearer
        let first = Task { try await server.indicate(handle: 0x0003, value: [0x01]) }
        try await withDeadline("the first indication") { await bearer.waitForSent(1) }
        let second = Task { try await server.indicate(handle: 0x0003, value: [0x02]) }
        bearer.inject("1E")
        try await withDeadline("the second indication") { await bearer.waitForSent(2) }
        #expect(bearer.sentHex == ["1D 03 00 01", "1D 03 00 02"])
        bearer.inject("1E")
        try await withDeadline("both confirmations") {
            try await first.value
            try await second.value
        }
        bearer.inject("1E")
        try await fixture.converse([("0A 05 00", "0B 00 00")])
        #expect(server.statistics.indicationsConfirmed == 2)
        #expect(server.statistics.unexpectedConfirmations == 1)
        #expect(DeadlineTimer.shared.armedCount < 1000)
    }

    @Test func indicationQueueHasABound() async throws {
        var configuration = ATTServer.Configuration()
        configuration.indicationQueueLimit = 0
        let fixture = ServerFixture(configuration: configuration)
        let server = fixture.server
        let first = Task { try await server.indicate(handle: 0x0003, value: [0x01]) }
        try await withDeadline("the first indication") { await fixture.bearer.waitForSent(1) }
        await #expect(throws: ATTServerError.indicationQueueFull(limit: 0)) {
            try await server.indicate(handle: 0x0003, value: [0x02])
        }
        fixture.bearer.inject("1E")
        try await withDeadline("the confirmation") { try await first.value }
    }

    @Test func anUnconfirmedIndicationKillsTheBearer() async throws {
        var configuration = ATTServer.Configuration()
        configuration.indicationTimeout = .milliseconds(200)
        let fixture = ServerFixture(configuration: configuration)
        let server = fixture.server
        let error = await withDeadlineResult { () async throws(ATTServerError) in try await server.indicate(handle: 0x0003, value: [0x01]) }
        #expect(error == .indicationTimedOut(timeout: .milliseconds(200)))
        let reason = ATTBearerError.transactionTimedOut(request: .handleValueIndication)
        #expect(fixture.bearer.closedWith == reason)
        #expect(fixture.client.closedReason == reason)
        #expect(server.statistics.indicationsTimedOut == 1)
        #expect(fixture.store.closedBearers == [0x0040])
        await #expect(throws: ATTServerError.bearerClosed(reason)) { try await server.indicate(handle: 0x0003, value: [0x02]) }
    }
}

/// Runs `body` and returns its typed error, or nil when it succeeded.
func withDeadlineResult(_ body: () async throws(ATTServerError) -> Void) async -> ATTServerError? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}
