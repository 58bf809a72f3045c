import ATT
import BareBLE
import BluetoothCore
import Bonding
import Foundation
import GATT
import HCI
import HCITransport
import Testing
import TestSupport

/// The BareBLE facade against the radio's HRM peripheral: GATT caching across reconnects
/// (counted in the radio's own capture), Service Changed after the peer adds a service,
/// the typed errors of an unencrypted read and of the peer disconnecting.
@Suite(.serialized) struct GATTFacadeVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral"]) }
    static let peripheral = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)

    func openCentral(_ harness: RadioHarness, security: SecurityPolicy = SecurityPolicy()) async throws -> Central {
        let central = try Central.open(.tcp(host: "127.0.0.1", port: harness.radio.tcpPort), security: security)
        try await central.powerOn()
        return central
    }

    /// A fresh Central connected to the peripheral, its database discovered.
    func discovered(_ harness: RadioHarness, security: SecurityPolicy = SecurityPolicy()) async throws -> (Central, Peripheral) {
        let central = try await openCentral(harness, security: security)
        let peripheral = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        try await peripheral.discoverServices()
        return (central, peripheral)
    }

    func characteristic(_ short: String, of peripheral: Peripheral) throws -> Characteristic {
        let uuid = try #require(BluetoothUUID(RadioPeripheral.uuid(short)))
        return try #require(peripheral.characteristic(uuid))
    }

    @Test func aReconnectWithAnUnchangedHashDoesNoDiscovery() async throws {
        let harness = try Self.harness.get()
        let central = try await openCentral(harness)
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        let client = try await harness.clientID(address: address.description)

        let first = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        #expect(first.mtu == 517)
        let discovered = try await first.discoverServices()
        #expect(discovered.count >= 8)
        #expect(central.knownPeripherals == [Self.peripheral])
        try await first.disconnect()

        let second = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        let remembered = try await second.discoverServices()
        #expect(remembered.map(\.declaration) == discovered.map(\.declaration))
        #expect(second.database?.databaseHash == first.database?.databaseHash)
        // The objects work as after a discovery: a read through the remembered database.
        let battery = try #require(second.characteristic(GATTUUID.batteryLevel))
        #expect(try await second.readValue(for: battery) == [87])
        try await second.disconnect()

        // What the radio's controller received from us, per connection.
        let capture = try BTSnoopFile(contentsOf: "\(harness.captureDirectory)/client-\(client).btsnoop")
        let connections = ATTRequests.perConnection(capture)
        #expect(connections.count == 2)
        let full = try #require(connections.first)
        let cached = try #require(connections.dropFirst().first)
        #expect(full.filter(ATTRequests.isDiscovery).count >= 6, "\(full)")
        // Exchange MTU, Read By Type 0x2B2A (the hash), the Service Changed CCCD write,
        // then our Read of the battery level: no discovery at all.
        #expect(cached.filter(ATTRequests.isDiscovery).isEmpty, "\(cached)")
        #expect(cached.map(\.first) == [0x02, 0x08, 0x12, 0x0A], "\(cached)")
        #expect(Array(cached[1].suffix(2)) == [0x2A, 0x2B], "the Read By Type reads the Database Hash: \(cached[1])")
    }

    @Test func serviceChangedAfterThePeerAddsAServiceShowsTheNewService() async throws {
        let harness = try Self.harness.get()
        let central = try await openCentral(harness)
        defer { central.close() }
        let peripheral = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        let before = try await peripheral.discoverServices()
        let known = Set(before.map(\.handles.lowerBound))
        try await harness.waitForEvent("subscription") { $0["characteristic"] as? String == "2A05" && $0["cccd"] as? String == "indicate" }
        let changes = peripheral.serviceChanges
        try await harness.control("add-service peripheral")
        let services = try await withDeadline("the service change", seconds: 30) {
            var iterator = changes.makeAsyncIterator()
            return await iterator.next()
        }
        let after = try #require(services ?? nil)
        let added = after.filter { !known.contains($0.handles.lowerBound) }
        #expect(added.map(\.uuid) == [BluetoothUUID(UInt16(0x181A))], "\(after)")
        #expect(peripheral.services.count == before.count + 1)
        let temperature = try #require(added.first?.characteristic(BluetoothUUID(UInt16(0x2A6E))))
        #expect(try await peripheral.readValue(for: temperature) == [0x66, 0x08])
        // The remembered copy follows, with the new hash.
        #expect(central.cache.database(for: Self.peripheral)?.services.count == before.count + 1)
        #expect(central.cache.database(for: Self.peripheral)?.databaseHash == peripheral.database?.databaseHash)
        try await peripheral.disconnect()
    }

    @Test func theEncryptedCharacteristicFailsWithATypedErrorThatAsksForPairing() async throws {
        let harness = try Self.harness.get()
        let (central, peripheral) = try await discovered(harness, security: SecurityPolicy(pairsWhenRequired: false))
        defer { central.close() }
        let secret = try characteristic("0007", of: peripheral)
        do {
            _ = try await peripheral.readValue(for: secret)
            Issue.record("an unencrypted read of the encrypted characteristic succeeded")
        } catch {
            // A client that never paired is told Insufficient Authentication (0x05), one
            // that paired but did not encrypt Insufficient Encryption (0x0F): Core 5.4
            // Vol 3 Part C 10.3.2, and what the radio does.
            #expect(error.errorCode == .insufficientAuthentication)
            #expect(error.needsPairing)
            #expect(error.description.contains("pair"))
        }
        #expect(secret.value == nil)
        try await peripheral.disconnect()
    }

    /// The default policy: the refused read pairs (Just Works with the radio's peer) and is
    /// retried; the bond lands in the store; a reconnect is encrypted with it before the
    /// first read, and that read needs no pairing.
    @Test func theEncryptedCharacteristicPairsOnceAndTheBondEncryptsTheReconnect() async throws {
        let harness = try Self.harness.get()
        let directory = TestScratch.root + "/facade-bonds"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The store's identity is this controller's address, learnt once it is on.
        let central = try await openCentral(harness)
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        let bonds = try BondStore(directory: directory, identity: .public(address))
        central.security = SecurityPolicy(bonds: bonds)
        let peripheral = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        try await peripheral.discoverServices()
        #expect(!peripheral.isEncrypted)
        let secret = try characteristic("0007", of: peripheral)
        #expect(try await peripheral.readValue(for: secret) == Array("secret".utf8))
        #expect(peripheral.isEncrypted)
        let bond = try #require(bonds.bond(for: Self.peripheral), "the pairing's bond was saved: \(bonds.bonds)")
        #expect(bond.peerKeys.longTermKey != nil)
        #expect(bond.localKeys.identityResolvingKey == bonds.local.identityResolvingKey, "our IRK was distributed")
        try await peripheral.disconnect()

        let again = try await central.connect(to: Self.peripheral, timeout: .seconds(5))
        #expect(again.isEncrypted, "encrypted with the bond at connect")
        try await again.discoverServices()
        let secretAgain = try characteristic("0007", of: again)
        #expect(try await again.readValue(for: secretAgain) == Array("secret".utf8))
        try await again.disconnect()
    }

    @Test func thePeerDisconnectingFailsPendingOperationsWithTheHCIReason() async throws {
        let harness = try Self.harness.get()
        let (central, peripheral) = try await discovered(harness)
        defer { central.close() }
        let long = try characteristic("0002", of: peripheral)
        let notify = try characteristic("0005", of: peripheral)
        let values = try await peripheral.notifications(for: notify)
        #expect(notify.isNotifying)
        // Reads back to back, so one is pending when the link drops.
        let reader = Task { () -> PeripheralError? in
            while true {
                do throws(PeripheralError) { try await peripheral.readValue(for: long) } catch { return error }
            }
        }
        try await harness.control("disconnect peripheral")
        let failure = try #require(await reader.value)
        #expect(failure.disconnectReason == .remoteUserTerminatedConnection, "\(failure)")
        let reason = try await peripheral.disconnection()
        #expect(reason == .remoteUserTerminatedConnection)
        #expect(peripheral.state == .disconnected(.remoteUserTerminatedConnection))
        // The notification stream ended with the link.
        let ended = try await withDeadline("the notification stream to end", seconds: 5) {
            for await _ in values {}
            return true
        }
        #expect(ended)
        #expect(!notify.isNotifying)
        let changes = peripheral.serviceChanges
        let changesEnded = try await withDeadline("serviceChanges to end", seconds: 5) {
            for await _ in changes {}
            return true
        }
        #expect(changesEnded)
        // Later operations fail at once with the same reason.
        do {
            _ = try await peripheral.readValue(for: long)
            Issue.record("a read after the disconnection succeeded")
        } catch {
            #expect(error.disconnectReason == .remoteUserTerminatedConnection)
        }
    }
}

/// ATT requests in a btsnoop capture of the radio's exposed controller (H4), split at each
/// LE (Enhanced) Connection Complete: decoded here from the bytes, independently of our
/// stack's decoders.
enum ATTRequests {
    /// Per connection, the ATT PDUs the host sent that are requests or commands (even
    /// opcodes below 0x1E, Write Command 0x52, Signed Write 0xD2), each as its bytes.
    static func perConnection(_ capture: BTSnoopFile) -> [[[UInt8]]] {
        var connections: [[[UInt8]]] = []
        for record in capture.records {
            let data = record.data
            guard let kind = data.first else { continue }
            if kind == 0x04, data.count >= 5, data[1] == 0x3E, data[3] == 0x01 || data[3] == 0x0A, data[4] == 0x00 {
                connections.append([])
                continue
            }
            // Host to controller (flag bit 0 clear), ACL: handle(2) length(2), then
            // L2CAP length(2) CID(2). Data to the controller is never fragmented here (ATT
            // PDUs of requests are short), which the length check confirms.
            guard record.flags & 1 == 0, kind == 0x02, data.count >= 9, !connections.isEmpty else { continue }
            let l2capLength = Int(data[5]) | Int(data[6]) << 8
            let cid = UInt16(data[7]) | UInt16(data[8]) << 8
            guard cid == 0x0004, data.count == 9 + l2capLength, l2capLength > 0 else { continue }
            let pdu = Array(data[9...])
            let opcode = pdu[0]
            if (opcode < 0x1E && opcode % 2 == 0) || opcode == 0x52 || opcode == 0xD2 {
                connections[connections.count - 1].append(pdu)
            }
        }
        return connections
    }

    /// Discovery: Find Information, Find By Type Value, Read By Group Type, and Read By
    /// Type for includes (0x2802) or characteristic declarations (0x2803).
    static func isDiscovery(_ pdu: [UInt8]) -> Bool {
        switch pdu[0] {
        case 0x04, 0x06, 0x10: return true
        case 0x08: return pdu.count == 7 && pdu[5] == 0x02 && pdu[6] == 0x28 || pdu.count == 7 && pdu[5] == 0x03 && pdu[6] == 0x28
        default: return false
        }
    }
}
