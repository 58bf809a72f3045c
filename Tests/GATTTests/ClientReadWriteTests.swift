import ATT
import BluetoothCore
import GATT
import Testing
import TestSupport

/// Read and write procedures (Core 5.4 Vol 3 Part G 4.8, 4.9) and their failures.
@Suite struct ClientReadWriteTests {
    @Test func readCharacteristicValue() async throws {
        let (client, bearer) = makeGATT([step("0A 03 00", "0B 48 52")])
        #expect(try await client.readValue(0x0003) == [0x48, 0x52])
        #expect(bearer.scriptFinished && bearer.failures.isEmpty)
    }

    @Test(arguments: [
        // The value ends exactly at a multiple of ATT_MTU - 1: the server says so...
        "01 0C 03 00 07",  // ...with Invalid Offset,
        "01 0C 03 00 0B",  // ...with Attribute Not Long,
        "0D",  // ...or with an empty Read Blob Response.
    ])
    func readLongCharacteristicValuesEndingAtAMultipleOfMTUMinusOne(_ end: String) async throws {
        let (client, bearer) = makeGATT([
            step("0A 03 00", "0B \(bytesHex(22))"),
            step("0C 03 00 16 00", "0D \(bytesHex(22, from: 22))"),
            step("0C 03 00 2C 00", end),
        ])
        #expect(try await client.readValue(0x0003) == Hex.bytes(bytesHex(44))!)
        #expect(bearer.scriptFinished && bearer.failures.isEmpty)
    }

    @Test func readLongCharacteristicValuesAcrossSeveralBlobsEndsOnAShortOne() async throws {
        let (client, bearer) = makeGATT([
            step("0A 03 00", "0B \(bytesHex(22))"),
            step("0C 03 00 16 00", "0D \(bytesHex(22, from: 22))"),
            step("0C 03 00 2C 00", "0D \(bytesHex(22, from: 44))"),
            step("0C 03 00 42 00", "0D \(bytesHex(5, from: 66))"),
        ])
        #expect(try await client.readValue(0x0003) == Hex.bytes(bytesHex(71))!)
        #expect(bearer.sent.count == 4)
        #expect(bearer.failures.isEmpty)
    }

    @Test func aDisconnectInTheMiddleOfALongReadFailsItWithTheReason() async throws {
        let (client, bearer) = makeGATT([
            step("0A 03 00", "0B \(bytesHex(22))"),
            step("0C 03 00 16 00", "0D \(bytesHex(22))", held: true),
        ])
        let read = Task { await gattError { () async throws(GATTError) in try await client.readValue(0x0003) } }
        try await withDeadline("the Read Blob") { await bearer.waitForSent(2) }
        bearer.disconnect(.disconnected(reason: 0x08))
        #expect(await read.value == .att(.bearerClosed(.disconnected(reason: 0x08))))
    }

    @Test func aPeerThatNeverAnswersEndsInTheTransactionTimeout() async throws {
        let (client, bearer) = makeGATT([step("0A 03 00", "0B 01", held: true)], timeout: .milliseconds(50))
        let error = await gattError { () async throws(GATTError) in try await client.readValue(0x0003) }
        #expect(error == .att(.transactionTimedOut(request: .readRequest, timeout: .milliseconds(50))))
        #expect(bearer.closedWith == .transactionTimedOut(request: .readRequest))
    }

    @Test func insufficientEncryptionAndAuthenticationSurfaceWithTheirNames() async throws {
        let (client, _) = makeGATT([
            step("0A 03 00", "01 0A 03 00 0F"),
            step("12 03 00 01", "01 12 03 00 05"),
        ])
        let read = await gattError { () async throws(GATTError) in try await client.readValue(0x0003) }
        #expect(read == .att(.errorResponse(request: .readRequest, handle: 0x0003, code: .insufficientEncryption)))
        #expect(read?.errorCode == .insufficientEncryption)
        let write = await gattError { () async throws(GATTError) in try await client.writeValue(0x0003, value: [0x01]) }
        #expect(write?.errorCode == .insufficientAuthentication)
    }

    @Test func readUsingCharacteristicUUID() async throws {
        let (client, bearer) = makeGATT([step("08 01 00 FF FF 19 2A", "09 03 03 00 64 07 00 32")])
        let values = try await client.readUsingCharacteristicUUID(GATTUUID.batteryLevel)
        #expect(values == [.init(handle: 0x0003, value: [0x64]), .init(handle: 0x0007, value: [0x32])])
        #expect(bearer.failures.isEmpty)
    }

    @Test func readMultipleAndReadMultipleVariable() async throws {
        let (client, bearer) = makeGATT([
            step("0E 03 00 05 00", "0F 41 42 43"),
            step("20 03 00 05 00", "21 02 00 41 42 01 00 43"),
        ])
        #expect(try await client.readMultiple([0x0003, 0x0005]) == [0x41, 0x42, 0x43])
        #expect(try await client.readMultipleVariable([0x0003, 0x0005]) == [[0x41, 0x42], [0x43]])
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func readMultipleVariableCutAtTheMTUReadsTheValuesItLeftOut() async throws {
        // ATT_MTU 23: the list is cut at 22 octets (Vol 3 Part F 3.4.4.12), so two 20-byte
        // values come back as one whole tuple; the second is read on its own.
        let first = bytesHex(20, from: 0x10), second = bytesHex(20, from: 0x40)
        let (client, bearer) = makeGATT([
            step("20 03 00 05 00 07 00", "21 14 00 \(first)"),
            step("0A 05 00", "0B \(second)"),
            step("0A 07 00", "0B 01"),
            // Our server starts no tuple without room for its length and a byte of value:
            // two 8-byte values fill 20 of the 22 octets, and the third is left out.
            step("20 03 00 05 00 07 00", "21 08 00 \(bytesHex(8)) 08 00 \(bytesHex(8, from: 8))"),
            step("0A 07 00", "0B 02"),
            // Short of the MTU, fewer values than handles is the server's error.
            step("20 03 00 05 00", "21 01 00 41"),
        ])
        #expect(try await client.readMultipleVariable([0x0003, 0x0005, 0x0007]) == [Hex.bytes(first)!, Hex.bytes(second)!, [0x01]])
        #expect(try await client.readMultipleVariable([0x0003, 0x0005, 0x0007]) == [Hex.bytes(bytesHex(8))!, Hex.bytes(bytesHex(8, from: 8))!, [0x02]])
        let short = await gattError { () async throws(GATTError) in try await client.readMultipleVariable([0x0003, 0x0005]) }
        guard case .invalidResponse = short else { Issue.record("\(String(describing: short))"); return }
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func readMultipleVariableFallsBackToSingleReadsAndRemembers() async throws {
        let (client, bearer) = makeGATT([
            step("20 03 00 05 00", "01 20 03 00 06"),
            step("0A 03 00", "0B 41 42"),
            step("0A 05 00", "0B 43"),
            // Known unsupported now: straight to Read.
            step("0A 03 00", "0B 41 42"),
            step("0A 05 00", "0B 43"),
        ])
        #expect(try await client.readMultipleVariable([0x0003, 0x0005]) == [[0x41, 0x42], [0x43]])
        #expect(try await client.readMultipleVariable([0x0003, 0x0005]) == [[0x41, 0x42], [0x43]])
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func writeCharacteristicValueAndWriteWithoutResponse() async throws {
        let (client, bearer) = makeGATT([
            step("12 03 00 01 02", "13"),
            step("52 05 00 07"),
        ])
        try await client.writeValue(0x0003, value: [0x01, 0x02])
        try await client.writeWithoutResponse(0x0005, value: [0x07])
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func writeLongCharacteristicValues() async throws {
        let (client, bearer) = makeGATT([
            step("16 03 00 00 00 \(bytesHex(18))", "17 03 00 00 00 \(bytesHex(18))"),
            step("16 03 00 12 00 \(bytesHex(12, from: 18))", "17 03 00 12 00 \(bytesHex(12, from: 18))"),
            step("18 01", "19"),
        ])
        try await client.writeValue(0x0003, value: Hex.bytes(bytesHex(30))!)
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    @Test func writeLongWithABadEchoCancelsTheQueueAndFailsTyped() async throws {
        let (client, bearer) = makeGATT([
            step("16 03 00 00 00 \(bytesHex(18))", "17 03 00 00 00 \(bytesHex(18))"),
            step("16 03 00 12 00 \(bytesHex(12, from: 18))", "17 03 00 12 00 \(bytesHex(11, from: 18)) FF"),
            step("18 00", "19"),
        ])
        let error = await gattError { () async throws(GATTError) in try await client.writeLongValue(0x0003, value: Hex.bytes(bytesHex(30))!) }
        #expect(error == .preparedWriteEchoMismatch(handle: 0x0003, offset: 18))
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    /// A long write whose caller is cancelled while a Prepare Write is out leaves parts in
    /// the server's queue: Execute Write 0x00 empties it, or the next long write's Execute
    /// Write would commit them with its own.
    @Test func aCancelledLongWriteEmptiesTheServersQueue() async throws {
        let (client, bearer) = makeGATT([
            step("16 03 00 00 00 \(bytesHex(18))", "17 03 00 00 00 \(bytesHex(18))", held: true),
            step("18 00", "19"),
        ], timeout: heldStepTimeout)
        let write = Task { await gattError { () async throws(GATTError) in try await client.writeLongValue(0x0003, value: Hex.bytes(bytesHex(30))!) } }
        try await withDeadline("the first Prepare Write") { await bearer.waitForSent(1) }
        write.cancel()
        // The Prepare Write keeps its place on the bearer: its answer comes, then the
        // Execute Write goes out. Before, nothing was sent after it.
        bearer.release()
        try await withDeadline("Execute Write 0x00") { await bearer.waitForSent(2) }
        guard case .att(.cancelled)? = await write.value else {
            Issue.record("the write should end cancelled"); return
        }
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    /// Two long writes at once take turns at the server's one prepare queue: the second
    /// prepares nothing until the first is executed.
    @Test func twoLongWritesAtOnceDoNotShareThePrepareQueue() async throws {
        let (client, bearer) = makeGATT([
            step("16 03 00 00 00 \(bytesHex(18))", "17 03 00 00 00 \(bytesHex(18))", held: true),
            step("16 03 00 12 00 \(bytesHex(12, from: 18))", "17 03 00 12 00 \(bytesHex(12, from: 18))"),
            step("18 01", "19"),
            step("16 05 00 00 00 \(bytesHex(18, from: 100))", "17 05 00 00 00 \(bytesHex(18, from: 100))"),
            step("16 05 00 12 00 \(bytesHex(2, from: 118))", "17 05 00 12 00 \(bytesHex(2, from: 118))"),
            step("18 01", "19"),
        ], timeout: heldStepTimeout)
        let first = Task { try await client.writeLongValue(0x0003, value: Hex.bytes(bytesHex(30))!) }
        try await withDeadline("the first Prepare Write") { await bearer.waitForSent(1) }
        let second = Task { try await client.writeLongValue(0x0005, value: Hex.bytes(bytesHex(20, from: 100))!) }
        // Before, the second's first Prepare Write queued behind the first's, here.
        for _ in 0..<200 { await Task.yield() }
        bearer.release()
        try await first.value
        try await second.value
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
    }

    /// A long write cancelled while another holds the server's prepare queue returns at
    /// once, cancelled, having sent nothing. Before, it waited for the other to finish.
    @Test func aLongWriteCancelledWhileItWaitsItsTurnReturnsAtOnce() async throws {
        let (client, bearer) = makeGATT([
            step("16 03 00 00 00 \(bytesHex(18))", "17 03 00 00 00 \(bytesHex(18))", held: true),
            step("16 03 00 12 00 \(bytesHex(12, from: 18))", "17 03 00 12 00 \(bytesHex(12, from: 18))"),
            step("18 01", "19"),
        ], timeout: heldStepTimeout)
        let first = Task { try await client.writeLongValue(0x0003, value: Hex.bytes(bytesHex(30))!) }
        try await withDeadline("the first Prepare Write") { await bearer.waitForSent(1) }
        let second = Task { await gattError { () async throws(GATTError) in try await client.writeLongValue(0x0005, value: [1, 2, 3]) } }
        for _ in 0..<200 { await Task.yield() }
        second.cancel()
        let outcome = try await withDeadline("the cancelled long write", seconds: 30) { await second.value }
        guard case .att(.cancelled)? = outcome else {
            Issue.record("the cancelled long write: \(String(describing: outcome))"); return
        }
        bearer.release()
        try await first.value
        #expect(bearer.failures.isEmpty && bearer.scriptFinished, "\(bearer.failures)")
    }

    @Test func reliableWriteExecutesEveryPreparedValueTogether() async throws {
        let (client, bearer) = makeGATT([
            step("16 03 00 00 00 01 02", "17 03 00 00 00 01 02"),
            step("16 05 00 00 00 03", "17 05 00 00 00 03"),
            step("18 01", "19"),
        ])
        try await client.reliableWrite([.init(handle: 0x0003, value: [1, 2]), .init(handle: 0x0005, value: [3])])
        #expect(bearer.failures.isEmpty && bearer.scriptFinished)
    }

    /// A Read of 22 bytes then Read Blobs of 22 at ATT_MTU 23, the last one `last` bytes
    /// long at offset 506.
    static func longRead(last: Int) -> [ScriptedBearer.Step] {
        [step("0A 03 00", "0B \(bytesHex(22))")] + (1...23).map { index in
            let offset = index * 22
            return step("0C 03 00 \(Hex.string([UInt8(offset & 0xFF)])) \(Hex.string([UInt8(offset >> 8)]))",
                        "0D \(bytesHex(index == 23 ? last : 22, from: offset))")
        }
    }

    @Test func aLongReadOfExactly512BytesEndsThere() async throws {
        let (client, bearer) = makeGATT(Self.longRead(last: 6))
        #expect(try await client.readValue(0x0003).count == 512)
        #expect(bearer.scriptFinished && bearer.failures.isEmpty)
    }

    @Test func aLongReadPastThe512ByteMaximumIsAnInvalidResponse() async throws {
        // Vol 3 Part F 3.2.9: no attribute value is longer than 512 bytes.
        let (client, bearer) = makeGATT(Self.longRead(last: 22))
        let error = await gattError { () async throws(GATTError) in try await client.readValue(0x0003) }
        guard case .invalidResponse(let why) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(why.contains("512"))
        #expect(bearer.scriptFinished && bearer.failures.isEmpty)
    }

    @Test func aReadResponseLongerThan512BytesIsAnInvalidResponse() async throws {
        // At ATT_MTU 517 one Read Response can carry 516 bytes.
        let (client, _) = makeGATT([step("0A 03 00", "0B \(bytesHex(516))")], mtu: 517)
        let error = await gattError { () async throws(GATTError) in try await client.readValue(0x0003) }
        guard case .invalidResponse = error else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test func aLongReadFromPastThe512ByteMaximumIsRefused() async throws {
        let (client, bearer) = makeGATT([step("0C 03 00 01 02", "0D 01")])
        let error = await gattError { () async throws(GATTError) in try await client.readLongValue(0x0003, offset: 513) }
        guard case .invalidRequest = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(bearer.sent.isEmpty)
    }
}
