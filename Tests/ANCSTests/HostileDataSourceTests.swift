import ANCS
import Testing
import TestSupport

/// What a broken or hostile Notification Provider can put on the Data Source: each ends in
/// a typed error, never a trap, and nothing held grows past the request's bound.
@Suite struct HostileDataSourceTests {
    let request = DataSourceRequest(command: .getNotificationAttributes(uid: 7, attributes: [
        NotificationAttributeRequest(.appIdentifier), NotificationAttributeRequest(.title, maximumLength: 32),
        NotificationAttributeRequest(.message, maximumLength: 100),
    ]))!

    func assembler() -> DataSourceAssembler {
        var assembler = DataSourceAssembler()
        assembler.expect(request)
        return assembler
    }

    @Test func dataWithNothingOutstandingIsRefused() {
        var idle = DataSourceAssembler()
        #expect(throws: DataSourceError.nothingOutstanding(length: 3)) { try idle.receive([0, 1, 2]) }
    }

    @Test func answerForAnotherUIDIsDroppedAndTheRequestStays() throws {
        var assembler = assembler()
        let other = ANCSWire.notificationAnswer(uid: 8, [(0, [0x61]), (1, []), (3, [])])
        #expect(throws: DataSourceError.otherNotification(expected: 7, received: 8)) { try assembler.receive(other) }
        #expect(assembler.request == request)
        let right = ANCSWire.notificationAnswer(uid: 7, [(0, [0x61]), (1, []), (3, [])])
        let response = try #require(try assembler.receive(right))
        #expect(response.values[0] == [0x61])
    }

    /// The tail of an abandoned answer, two octets whose first is our command (0x00, as a
    /// length's high byte often is), arrives before the real answer: read as a header, it
    /// used to take the real answer's start with it when its UID check failed, and the rest
    /// of the answer was dropped (the fetch timed out). The real answer, split in two, still
    /// completes; the stray is reported once.
    @Test func aStrayTailBeforeTheAnswerDoesNotTakeItsStartWithIt() throws {
        var assembler = assembler()
        #expect(try assembler.receive([0x00, 0x05]) == nil)
        let answer = ANCSWire.notificationAnswer(uid: 7, [(0, [0x61]), (1, [0x62]), (3, [0x63])])
        #expect(throws: DataSourceError.otherNotification(expected: 7, received: 0x0007_0005)) {
            try assembler.receive(Array(answer.prefix(8)))
        }
        let response = try #require(try assembler.receive(Array(answer.dropFirst(8))))
        #expect(response.values == [0: [0x61], 1: [0x62], 3: [0x63]])
        // Whole in one notification: the answer, the stray unreported.
        var whole = self.assembler()
        #expect(try whole.receive([0x00]) == nil)
        #expect(try whole.receive(answer)?.values[3] == [0x63])
    }

    @Test func answerToAnotherCommandIsDropped() {
        var assembler = assembler()
        #expect(throws: DataSourceError.otherCommand(expected: 0, received: 1)) { try assembler.receive(ANCSWire.appAnswer(app: "a", displayName: "A")) }
        #expect(assembler.receivedLength == 0)
    }

    @Test func answerForAnotherAppIsRefusedAtTheFirstDifferentOctet() {
        var assembler = DataSourceAssembler()
        assembler.expect(DataSourceRequest(command: .getAppAttributes(appIdentifier: "com.a", attributes: [.displayName]))!)
        #expect(throws: DataSourceError.otherApp(expected: Array("com.a".utf8), received: Array("com.b".utf8))) {
            try assembler.receive(ANCSWire.appAnswer(app: "com.b", displayName: "B"))
        }
        // A longer identifier sharing our prefix differs where ours has its NUL.
        #expect(throws: DataSourceError.otherApp(expected: Array("com.a".utf8), received: Array("com.ab".utf8))) {
            try assembler.receive(ANCSWire.appAnswer(app: "com.ab", displayName: "B"))
        }
    }

    @Test func lengthPastWhatWeAskedEndsTheAnswerBeforeItsOctetsArrive() {
        var assembler = assembler()
        // Title announced at 65535 octets, only its header sent: refused on the header.
        let header: [UInt8] = [0, 7, 0, 0, 0, 0, 1, 0, 0x61, 1, 0xFF, 0xFF]
        #expect(throws: DataSourceError.attributeTooLong(attribute: 1, length: 65535, maximum: 32)) { try assembler.receive(header) }
        #expect(assembler.request == nil)
    }

    @Test func implicitMaximumBoundsAttributesWithoutALength() {
        var assembler = assembler()
        let long = ANCSWire.notificationAnswer(uid: 7, [(0, [UInt8](repeating: 0x61, count: DataSourceRequest.implicitMaximumLength + 1))])
        #expect(throws: DataSourceError.attributeTooLong(attribute: 0, length: 513, maximum: 512)) { try assembler.receive(long) }
    }

    @Test func unrequestedAndRepeatedAttributesEndTheAnswer() {
        var first = assembler()
        #expect(throws: DataSourceError.unrequestedAttribute(2)) { try first.receive(ANCSWire.notificationAnswer(uid: 7, [(2, [])])) }
        var second = assembler()
        #expect(throws: DataSourceError.repeatedAttribute(0)) { try second.receive(ANCSWire.notificationAnswer(uid: 7, [(0, []), (0, [])])) }
        #expect(second.request == nil)
    }

    @Test func octetsAfterTheLastAttributeAreRefused() {
        var assembler = assembler()
        let answer = ANCSWire.notificationAnswer(uid: 7, [(0, []), (1, []), (3, [])]) + [0xEE, 0xEE]
        #expect(throws: DataSourceError.trailingBytes(count: 2)) { try assembler.receive(answer) }
    }

    @Test func fragmentsThatNeverCompleteStayBoundedAndReportWhatIsMissing() throws {
        var assembler = assembler()
        // The message announces 100 octets; a phone drips one octet at a time and stops at 99.
        let start = ANCSWire.notificationAnswer(uid: 7, [(0, [0x61]), (1, [])]) + [3, 100, 0]
        #expect(try assembler.receive(start) == nil)
        for _ in 0..<99 { #expect(try assembler.receive([0x62]) == nil) }
        #expect(assembler.missingAttributes == [3])
        #expect(assembler.receivedLength <= request.maximumResponseLength)
        assembler.cancel()
        #expect(assembler.missingAttributes == [])
        #expect(throws: DataSourceError.nothingOutstanding(length: 1)) { try assembler.receive([0x62]) }
    }

    @Test func garbageNeverTraps() {
        var random = SeededRandom(seed: 13)
        for round in 0..<20_000 {
            var assembler = DataSourceAssembler()
            assembler.expect(round % 2 == 0 ? request : DataSourceRequest(command: .getAppAttributes(appIdentifier: "x", attributes: [.displayName]))!)
            for _ in 0..<4 {
                let fragment = random.bytes(lengths: 0...23)
                _ = try? assembler.receive(fragment)
                #expect(assembler.receivedLength <= request.maximumResponseLength + 24)
            }
        }
    }
}
