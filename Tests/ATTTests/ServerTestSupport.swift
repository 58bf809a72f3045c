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

    init(
        store: InMemoryAttributeStore = ServerFixture.database(), mtu: UInt16 = 23, bearerID: UInt16 = 0x0040,
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

    static let uuid128 = "F0 DE BC 9A 78 56 34 12 34 12 78 56 34 12 00 00"

    static func database() -> InMemoryAttributeStore {
        func attribute(_ handle: UInt16, _ type: UInt16, _ permissions: ATTPermissions, groupEnd: UInt16? = nil) -> ATTAttribute {
            ATTAttribute(handle: handle, type: BluetoothUUID(type), permissions: permissions, groupEnd: groupEnd)
        }
        let custom = try! BluetoothUUID(littleEndian: Hex.bytes(uuid128)!)
        let encrypted = ATTPermissions.Access(protection: .encryption)
        let store = InMemoryAttributeStore([
            (attribute(0x0001, 0x2800, .readOnly, groupEnd: 0x0005), [0x00, 0x18]),
            (attribute(0x0002, 0x2803, .readOnly), [0x02, 0x03, 0x00, 0x00, 0x2A]),
            (attribute(0x0003, 0x2A00, .readOnly), Array("BareBLE".utf8)),
            (attribute(0x0004, 0x2803, .readOnly), [0x0A, 0x05, 0x00, 0x01, 0x2A]),
            (attribute(0x0005, 0x2A01, .readWrite), [0x00, 0x00]),
            (attribute(0x0006, 0x2800, .readOnly, groupEnd: 0x000B), Hex.bytes(uuid128)!),
            (attribute(0x0007, 0x2803, .readOnly), [0x1A, 0x08, 0x00] + Hex.bytes(uuid128)!),
            (ATTAttribute(handle: 0x0008, type: custom, permissions: .readWrite), (0..<100).map { UInt8($0) }),
            (attribute(0x0009, 0x2902, .readWrite), [0x00, 0x00]),
            (attribute(0x000A, 0x2A19, .init(read: encrypted)), [0x64]),
            (attribute(0x000B, 0x2A19, .init(read: .init(protection: .encryption), write: .init(protection: .encryption))), [0x63]),
            (attribute(0x000C, 0x2800, .readOnly, groupEnd: 0x0010), [0x0F, 0x18]),
            (attribute(0x000D, 0x2A19, .init(read: .init(protection: .authentication))), [0x62]),
            (attribute(0x000E, 0x2A19, .init(read: .init(protection: .secureConnections))), [0x61]),
            (attribute(0x000F, 0x2A19, .init(read: .init(protection: .encryption, minimumKeySize: 16))), [0x60]),
            (attribute(0x0010, 0x2A19, .init(read: .init(requiresAuthorization: true))), [0x5F]),
            (attribute(0x0011, 0x2801, .readOnly, groupEnd: 0x0013), [0x0A, 0x18]),
            (attribute(0x0012, 0x2A29, .init(write: .open)), [0x01]),
            (attribute(0x0013, 0x2A2A, .readOnly), [0x02]),
        ])
        store.setAuthorization(.insufficientAuthorization, for: 0x0010)
        return store
    }
}

/// `count` bytes from `start`, as hex.
func sequenceHex(_ count: Int, from start: Int = 0) -> String {
    Hex.string((start..<start + count).map { UInt8(truncatingIfNeeded: $0) }, separator: " ")
}
