@testable import ATT
import BluetoothCore
import Testing
import TestSupport

/// The server's side of the scripted conversations: the peer's PDUs go in through a
/// ``ScriptedBearer`` (as its reader thread would deliver them), and whatever the server
/// sends is recorded; nothing is matched by the bearer, the tables below are.
struct ServerFixture {
    let server: ATTServer
    let client: ATTClient
    let bearer: ScriptedBearer
    let store: InMemoryAttributeStore

    static let uuid128 = InMemoryAttributeStore.testUUID128

    init(
        store: InMemoryAttributeStore = .testDatabase(), mtu: UInt16 = 23, bearerID: UInt16 = 0x0040,
        security: ATTLinkSecurity = .open, configuration: ATTServer.Configuration = .init(),
        verifier: ATTSignatureVerifier? = nil
    ) {
        bearer = ScriptedBearer([], mtu: mtu, unscripted: Set((0...255).map { ATTOpcode(rawValue: UInt8($0)) }))
        self.store = store
        server = ATTServer(
            bearer: bearer, store: store, bearerID: bearerID, security: security, configuration: configuration, verifier: verifier)
        client = ATTClient(bearer: bearer, server: server)
    }

    /// Sends each request and checks the server's answer, one exchange at a time: the
    /// table is (request, response) hex, the client's test tables read the other way round.
    func converse(_ exchanges: [(request: String, response: String)], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for (request, response) in exchanges {
            let before = bearer.sent.count
            bearer.inject(request)
            let sent = bearer
            try await withDeadline("the answer to \(request)", seconds: 10) { await sent.waitForSent(before + 1) }
            #expect(
                bearer.sent[before] == Hex.bytes(response), "\(request) → expected \(response), got \(bearer.sentHex[before])",
                sourceLocation: sourceLocation)
        }
    }

    /// Delivers PDUs that get no answer (commands), then a Read that does, so the commands
    /// have been handled when this returns; checks nothing else was sent.
    func sendUnanswered(_ pdus: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = bearer.sent.count
        for pdu in pdus { bearer.inject(pdu) }
        try await converse([("0A 03 00", "0B 42 61 72 65 42 4C 45")], sourceLocation: sourceLocation)
        #expect(bearer.sent.count == before + 1, "answered a command: \(bearer.sentHex.suffix(from: before))", sourceLocation: sourceLocation)
    }
}

/// `count` bytes from `start`, as hex.
func sequenceHex(_ count: Int, from start: Int = 0) -> String {
    Hex.string((start..<start + count).map { UInt8(truncatingIfNeeded: $0) }, separator: " ")
}
