import ATT
import BluetoothCore
import Testing
import TestSupport

/// BareBLE's ATT server against Bumble's GATT client, an independent implementation, on the
/// virtual radio: we advertise, the radio's central connects and runs its client (the
/// `gatt-client` control line) over our L2CAP bearer.
extension PairingVirtualRadio {
    static let serverService = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let serverLongValue = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let serverIndicated = BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let serverSecret = BluetoothUUID("6E400004-B5A3-F393-E0A9-E50E24DCCA9E")!

    /// GAP with a name; one service with a 300-octet read/write value, an indicating value
    /// with its CCCD, and a value that needs encryption.
    static func serverDatabase() -> InMemoryAttributeStore {
        func attribute(_ handle: UInt16, _ type: BluetoothUUID, _ permissions: ATTPermissions, groupEnd: UInt16? = nil) -> ATTAttribute {
            ATTAttribute(handle: handle, type: type, permissions: permissions, groupEnd: groupEnd)
        }
        func declaration(_ properties: UInt8, _ valueHandle: UInt16, _ uuid: BluetoothUUID) -> [UInt8] {
            [properties, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)] + uuid.littleEndianBytes
        }
        let service = BluetoothUUID(UInt16(0x2800)), characteristic = BluetoothUUID(UInt16(0x2803))
        return InMemoryAttributeStore([
            (attribute(0x0001, service, .readOnly, groupEnd: 0x0003), [0x00, 0x18]),
            (attribute(0x0002, characteristic, .readOnly), declaration(0x02, 0x0003, BluetoothUUID(UInt16(0x2A00)))),
            (attribute(0x0003, BluetoothUUID(UInt16(0x2A00)), .readOnly), Array("BareBLE-Server".utf8)),
            (attribute(0x0004, service, .readOnly, groupEnd: 0x000B), serverService.littleEndianBytes),
            (attribute(0x0005, characteristic, .readOnly), declaration(0x0E, 0x0006, serverLongValue)),
            (attribute(0x0006, serverLongValue, .readWrite), (0..<300).map { UInt8(truncatingIfNeeded: $0) }),
            (attribute(0x0007, characteristic, .readOnly), declaration(0x22, 0x0008, serverIndicated)),
            (attribute(0x0008, serverIndicated, .readOnly), [0x00]),
            (attribute(0x0009, BluetoothUUID(UInt16(0x2902)), .readWrite), [0x00, 0x00]),
            (attribute(0x000A, characteristic, .readOnly), declaration(0x02, 0x000B, serverSecret)),
            (attribute(0x000B, serverSecret, .init(read: .init(protection: .encryption))), Array("secret".utf8)),
        ])
    }

    @Test("ATT server: Bumble's GATT client discovers, reads (long and refused), writes and is indicated")
    func bumbleGATTClientAgainstOurATTServer() async throws {
        try await withStack { log, stack in
            let ours = stack.radioName
            let radioClient = try await log.wait("client", where: { ($0["address"] as? String)?.hasPrefix(ours) == true })["id"] as? Int
            let connection = try await acceptFromCentral(
                stack, settings: "io=no-input-no-output sc=1 bonding=0 mitm=0 passkey=ask stall=off", flags: "no-pair")
            let store = Self.serverDatabase()
            let bearer = L2CAPBearer(manager: stack.channels, connection: connection.handle)
            let server = ATTServer(bearer: bearer, store: store, bearerID: connection.handle)
            let client = ATTClient(bearer: bearer, server: server)
            let session = try await log.control("gatt-client central", timeout: .seconds(90))

            #expect(session["mtu"] as? Int == 247)
            #expect(bearer.mtu == 247)
            let services = (session["services"] as? [String] ?? []).map { $0.uppercased() }
            #expect(services.count == 2)
            #expect(services.contains { $0.contains(Self.serverService.uuidString128) })
            #expect((session["characteristics"] as? [String])?.count == 4)
            let reads = session["reads"] as? [String: String] ?? [:]
            let long = reads.first { $0.key.uppercased().contains(Self.serverLongValue.uuidString128) }?.value
            #expect(long == Hex.string((0..<300).map { UInt8(truncatingIfNeeded: $0) }).lowercased())
            let errors = session["errors"] as? [String: Int] ?? [:]
            #expect(errors.first { $0.key.uppercased().contains(Self.serverSecret.uuidString128) }?.value == 0x05)
            #expect(store.writes == [
                .init(handle: 0x0006, value: [0x12, 0x34], kind: .request, bearer: connection.handle),
                .init(handle: 0x0006, value: [0x56], kind: .command, bearer: connection.handle),
                .init(handle: 0x0009, value: [0x02, 0x00], kind: .request, bearer: connection.handle),
            ])

            try await withDeadline("the indication's confirmation", seconds: 10) {
                try await server.indicate(handle: 0x0008, value: [0xAB, 0xCD])
            }
            let indication = try await log.wait("gatt-indication", where: { $0["peer"] as? String == "central" })
            #expect(indication["value"] as? String == "abcd")
            let statistics = server.statistics
            #expect(statistics.indicationsConfirmed == 1)
            #expect(statistics.protocolViolations == 0 && statistics.invalidRequests == 0)
            #expect(client.closedReason == nil)
            try await connection.disconnect()

            // The radio's capture of this controller, complete once the radio saw it go.
            stack.controller.close()
            let id = try #require(radioClient)
            try await log.wait("client-closed", where: { $0["id"] as? Int == id })
            let capture = "\(try Self.harness.get().captureDirectory)/client-\(id).btsnoop"
            let report = try await Tshark.check(capture)
            #expect(report.packets > 50)
            #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
            let decoded = try Tshark.verbose(capture)
            #expect(decoded.contains("Read Blob Response") && decoded.contains("Handle Value Confirmation"))
        }
    }
}
