import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// LE encryption on a connection, as scripted conversations with the controller.
@Suite struct ConnectionEncryptionTests {
    static let encryptionCommands: [any HCICommand.Type] = [
        LEEnableEncryption.self, LELongTermKeyRequestReply.self, LELongTermKeyRequestNegativeReply.self, ReadEncryptionKeySize.self,
    ]
    static let key: [UInt8] = Array(1...16)

    func change(_ status: HCIErrorCode = .success, on: Bool = true, keySize: UInt8? = nil) -> HCIEvent {
        .encryptionChange(.init(status: status, connectionHandle: 0x0040, encryptionEnabled: on ? 1 : 0, keySize: keySize))
    }

    func answerEnable(_ bench: ConnectionBench, with event: HCIEvent) {
        bench.script(LEEnableEncryption.opcode) { _ in [ConnectionBench.status(LEEnableEncryption.opcode), ConnectionBench.event(event)] }
    }

    @Test func enableEncryptionSendsTheKeyAndReadsTheKeySizeAfterAV1Change() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        let connection = try await bench.connected()
        let seen = Lock<[EncryptionEvent]>([])
        connection.setEncryptionHandler { event in seen.withLock { $0.append(event) } }
        answerEnable(bench, with: change())
        bench.script(ReadEncryptionKeySize.opcode) { _ in [bench.chip.complete(ReadEncryptionKeySize.opcode, [0x40, 0x00, 16])] }
        let state = try await connection.enableEncryption(longTermKey: Self.key, encryptedDiversifier: 0x1234, randomNumber: 0x0102_0304_0506_0708, minimumKeySize: 16)
        #expect(state == LinkEncryption(isEncrypted: true, keySize: 16))
        #expect(bench.lastParameters(LEEnableEncryption.opcode) == [0x40, 0x00, 8, 7, 6, 5, 4, 3, 2, 1, 0x34, 0x12] + Self.key)
        #expect(bench.sentOpcodes().suffix(2) == [LEEnableEncryption.opcode, ReadEncryptionKeySize.opcode])
        #expect(seen.withLock { $0 } == [.encrypted(keySize: nil)])
    }

    @Test func aKeySizeTheControllerFailsToReadIsAnErrorNotAPass() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        let connection = try await bench.connected()
        answerEnable(bench, with: change())
        bench.script(ReadEncryptionKeySize.opcode) { _ in
            [HCIPacket(.event, HCIEvent.commandComplete(.init(
                numHCICommandPackets: 1, opcode: ReadEncryptionKeySize.opcode,
                returnParameters: [HCIErrorCode.unspecifiedError.rawValue, 0x40, 0x00, 0])).encode())]
        }
        await #expect(throws: ConnectionError.controller(.commandFailed(ReadEncryptionKeySize.opcode, .unspecifiedError))) {
            try await connection.enableEncryption(longTermKey: Self.key, minimumKeySize: 16)
        }
        #expect(connection.encryption == LinkEncryption(isEncrypted: true, keySize: nil))
    }

    @Test func aV2ChangeCarriesTheKeySizeAndAShortKeyIsRefused() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        let connection = try await bench.connected()
        answerEnable(bench, with: change(keySize: 7))
        await #expect(throws: ConnectionError.encryptionKeyTooShort(7, minimum: 16)) {
            try await connection.enableEncryption(longTermKey: Self.key, minimumKeySize: 16)
        }
        #expect(!bench.sentOpcodes().contains(ReadEncryptionKeySize.opcode))
        #expect(connection.encryption == LinkEncryption(isEncrypted: true, keySize: 7))
    }

    @Test func aPeerWithoutTheKeyFailsWithTheStatusNeverAsSuccess() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        let connection = try await bench.connected()
        answerEnable(bench, with: change(.pinOrKeyMissing, on: false))
        await #expect(throws: ConnectionError.encryptionFailed(.pinOrKeyMissing)) {
            try await connection.enableEncryption(longTermKey: Self.key)
        }
        #expect(!connection.encryption.isEncrypted)
        // A key of the wrong length never reaches the controller.
        await #expect(throws: ConnectionError.self) { try await connection.enableEncryption(longTermKey: [1, 2, 3]) }
    }

    @Test func aKeyRefreshEndsAnEnableOnAnEncryptedLink() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        let connection = try await bench.connected()
        answerEnable(bench, with: .encryptionKeyRefreshComplete(.init(status: .success, connectionHandle: 0x0040)))
        bench.script(ReadEncryptionKeySize.opcode) { _ in [bench.chip.complete(ReadEncryptionKeySize.opcode, [0x40, 0x00, 16])] }
        try await connection.enableEncryption(longTermKey: Self.key)
    }

    @Test func theCentralAloneStartsEncryption() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        bench.inject(ConnectionBench.enhancedComplete(role: .peripheral))
        try await waitUntil { bench.connector.connection(handle: 0x0040) != nil }
        let connection = try #require(bench.connector.connection(handle: 0x0040))
        await #expect(throws: ConnectionError.self) { try await connection.enableEncryption(longTermKey: Self.key) }
    }

    @Test func longTermKeyRequestsAreAnsweredByTheProviderAndZeroKeysAreRefused() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        bench.inject(ConnectionBench.enhancedComplete(role: .peripheral))
        try await waitUntil { bench.connector.connection(handle: 0x0040) != nil }
        let connection = try #require(bench.connector.connection(handle: 0x0040))
        let asked = Lock<[(UInt16, UInt64)]>([])
        connection.setLongTermKeyProvider { ediv, rand in
            asked.withLock { $0.append((ediv, rand)) }
            return ediv == 0x1234 ? Self.key : (ediv == 0 ? [UInt8](repeating: 0, count: 16) : nil)
        }
        func request(_ ediv: UInt16) -> HCIEvent {
            .le(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: 0x0040, randomNumber: 9, encryptedDiversifier: ediv)))
        }
        bench.inject(request(0x1234))
        try await waitUntil { bench.sentOpcodes().last == LELongTermKeyRequestReply.opcode }
        #expect(bench.lastParameters(LELongTermKeyRequestReply.opcode) == [0x40, 0x00] + Self.key)
        bench.inject(request(0))  // the provider hands back an all-zero key: refused
        try await waitUntil { bench.sentOpcodes().last == LELongTermKeyRequestNegativeReply.opcode }
        bench.inject(request(7))  // no key
        try await waitUntil { bench.sentOpcodes().filter { $0 == LELongTermKeyRequestNegativeReply.opcode }.count == 2 }
        #expect(asked.withLock { $0.map(\.1) } == [9, 9, 9])
        // A failed Encryption Change is reported, and the link stays unencrypted.
        let seen = Lock<[EncryptionEvent]>([])
        connection.setEncryptionHandler { event in seen.withLock { $0.append(event) } }
        bench.inject(change(.pinOrKeyMissing, on: false))
        try await waitUntil { !seen.withLock { $0.isEmpty } }
        #expect(seen.withLock { $0 } == [.failed(.pinOrKeyMissing)])
        #expect(!connection.encryption.isEncrypted)
    }

    @Test func withoutAProviderEveryRequestGetsANegativeReply() async throws {
        let bench = try await ConnectionBench.start(extraCommands: Self.encryptionCommands)
        bench.inject(ConnectionBench.enhancedComplete(role: .peripheral))
        try await waitUntil { bench.connector.connection(handle: 0x0040) != nil }
        bench.inject(.le(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: 0x0040, randomNumber: 0, encryptedDiversifier: 0))))
        try await waitUntil { bench.sentOpcodes().last == LELongTermKeyRequestNegativeReply.opcode }
        #expect(bench.lastParameters(LELongTermKeyRequestNegativeReply.opcode) == [0x40, 0x00])
    }
}
