import BluetoothCore
@testable import HCI
import HCITransport
import Testing
import TestSupport

/// The Connector's acceptor: a central that encrypts the moment it connects (a bonded
/// phone) sends its LTK request right behind the connection's completion, and the link's
/// key provider must already be there. A consumer of `incomingConnections()` sets it from
/// a task, too late in two runs of three (Negative Reply seen); the acceptor runs on the
/// reader thread before the next event.
@Suite struct ConnectionAcceptorTests {
    static let key: [UInt8] = Array(1...16)
    static let central = DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public)

    @Test func anLTKRequestRightBehindTheCompletionIsAnsweredWithTheKey() async throws {
        let bench = try await ConnectionBench.start(extraCommands: [LELongTermKeyRequestReply.self, LELongTermKeyRequestNegativeReply.self])
        let accepted = Lock<[UInt16]>([])
        #expect(nil != bench.connector.setAcceptor { connection in
            accepted.withLock { $0.append(connection.handle) }
            connection.setLongTermKeyProvider { _, _ in Self.key }
        })
        for _ in 1...20 {
            let handle = UInt16(accepted.withLock { $0.count } + 1)
            bench.inject(
                ConnectionBench.legacyComplete(handle: handle, role: .peripheral, peer: Self.central),
                .le(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: handle, randomNumber: 9, encryptedDiversifier: 0x1234))))
            try await waitUntil { bench.sentOpcodes().filter { $0 == LELongTermKeyRequestReply.opcode || $0 == LELongTermKeyRequestNegativeReply.opcode }.count == Int(handle) }
        }
        #expect(!bench.sentOpcodes().contains(LELongTermKeyRequestNegativeReply.opcode))
        #expect(accepted.withLock { $0 } == Array(1...20))
    }

    @Test func oneAcceptorPerConnectorAndOnlyItsOwnerRemovesIt() async throws {
        let bench = try await ConnectionBench.start()
        let first = try #require(bench.connector.setAcceptor { _ in })
        #expect(bench.connector.setAcceptor { _ in } == nil)
        bench.connector.removeAcceptor(first + 1)
        #expect(bench.connector.setAcceptor { _ in } == nil, "a stranger's token removed nothing")
        bench.connector.removeAcceptor(first)
        #expect(bench.connector.setAcceptor { _ in } != nil)
    }
}
