import ATT
import BluetoothCore
import Bonding
import Foundation
import HCI
import HCITransport
import L2CAP
import SMP
import Testing
import TestSupport

/// Bumble's name for the method (radio `pairing-complete` events).
private let bumbleName = ["JW": "just-works", "NC": "numeric-comparison", "ID": "passkey", "RD": "passkey", "BI": "passkey", "OOB": "oob"]

/// The user on our side, played by the test: passkeys we show are typed into the radio's
/// peer with a control line; passkeys the peer shows are read from its event log; when
/// both sides type, both get 123456; numeric comparison is confirmed (and recorded).
final class RadioUser: PairingDelegate {
    let log: RadioEventLog
    let radioPeer: String
    /// Our address as the radio's peer names it (its events carry it).
    let ourAddress: String
    let wrongPasskey: UInt32?
    let shown = Lock<[UInt32]>([])
    let compared = Lock<[UInt32]>([])

    init(log: RadioEventLog, radioPeer: String, ourAddress: String, wrongPasskey: UInt32? = nil) {
        self.log = log
        self.radioPeer = radioPeer
        self.ourAddress = ourAddress
        self.wrongPasskey = wrongPasskey
    }

    func displayPasskey(_ passkey: UInt32, peer: DeviceAddress) async {
        shown.withLock { $0.append(passkey) }
        _ = try? await log.control("passkey \(radioPeer) \(passkey)")
    }

    func enterPasskey(peer: DeviceAddress) async -> UInt32? {
        if let wrongPasskey { return wrongPasskey }
        let ours = ourAddress
        let name = radioPeer
        guard let event = try? await log.wait("pairing-display", timeout: .seconds(3), where: {
            $0["peer"] as? String == name && ($0["address"] as? String)?.hasPrefix(ours) == true
        }) else {
            // The peer shows nothing, so it types too: both enter the same passkey.
            _ = try? await log.control("passkey \(radioPeer) 123456")
            return 123_456
        }
        return (event["number"] as? Int).map(UInt32.init)
    }

    func confirmNumericComparison(_ value: UInt32, peer: DeviceAddress) async -> Bool {
        compared.withLock { $0.append(value) }
        return true
    }
}

/// Pairing against Bumble's SMP on the virtual radio, an independent implementation:
/// BareBLE as initiator (central, the radio's peripheral responds) and as responder
/// (BareBLE advertises and accepts the radio's central, which starts pairing).
@Suite(.serialized) struct PairingVirtualRadio {
    static let harness = Result { try RadioHarness(arguments: ["--tcp", "--peripheral", "--central"]) }
    static let log = Result { RadioEventLog(try harness.get()) }
    static let peripheral = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)
    static let centralPeer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0006), type: .random)

    struct Stack {
        let controller: HCIController
        let info: ControllerInfo
        let connector: Connector
        let channels: ChannelManager
        var address: DeviceAddress { DeviceAddress(info.address, type: .public) }
        var radioName: String { "\(info.address)" }
    }

    func open(_ harness: RadioHarness) async throws -> Stack {
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: harness.radio.tcpPort)
        let controller = HCIController(transport: transport)
        try controller.start()
        let info = try await controller.powerOn()
        let host = ControllerHost(controller: controller)
        return Stack(controller: controller, info: info, connector: host.connector, channels: host.channels)
    }

    /// A fresh exposed controller for one test, closed when `body` ends.
    func withStack(_ body: (RadioEventLog, Stack) async throws -> Void) async throws {
        let harness = try Self.harness.get()
        let stack = try await open(harness)
        defer { stack.controller.close() }
        try await body(try Self.log.get(), stack)
    }

    /// Matches radio events of `peer` about this stack's controller.
    func about(_ peer: String, _ stack: Stack) -> @Sendable ([String: Any]) -> Bool {
        let ours = stack.radioName
        return { $0["peer"] as? String == peer && ($0["address"] as? String)?.hasPrefix(ours) == true }
    }

    /// Configures the radio's peripheral and connects to it as central.
    func connectToPeripheral(_ stack: Stack, settings: String) async throws -> Connection {
        try await Self.log.get().control("pairing peripheral \(settings)")
        return try await stack.connector.connect(to: Self.peripheral, timeout: .seconds(5))
    }

    /// Configures the radio's central, advertises connectably and returns the connection
    /// it makes to us (we are peripheral); `flags` go on the `connect-pair` line.
    func acceptFromCentral(_ stack: Stack, settings: String, flags: String = "") async throws -> Connection {
        let log = try Self.log.get()
        try await log.control("pairing central \(settings)")
        let incoming = stack.connector.incomingConnections()
        _ = try await Advertiser(controller: stack.controller).start(
            AdvertisingParameters(kind: .connectableUndirected, interval: .milliseconds(20)), data: AdvertisingData([0x02, 0x01, 0x06]))
        try log.send("connect-pair central \(stack.radioName) \(flags)")
        var connections = incoming.makeAsyncIterator()
        guard let connection = await connections.next() else { throw RadioHarness.HarnessError.noEvent("incoming connection") }
        #expect(connection.role == .peripheral)
        return connection
    }

    func configuration(_ test: PairingCase, stack: Stack) -> PairingConfiguration {
        PairingConfiguration(
            ioCapability: test.ours, bonding: test.bonding, mitm: true, secureConnections: test.secureConnections,
            localIdentity: IdentityKey(identityResolvingKey: SMPValue128(0x0BAE_B1E0_0000_0000_0000_0000_0000_0001), address: stack.address),
            localSigningKey: SMPValue128(0x0BAE_C5C0_0000_0000_0000_0000_0000_0002))
    }

    func radioSettings(_ test: PairingCase) -> String {
        "io=\(test.theirs.name) sc=\(test.secureConnections ? 1 : 0) bonding=\(test.bonding ? 1 : 0) mitm=1 confirm=1 passkey=ask stall=off"
    }

    /// Checks one finished pairing against the table, Bumble's own choice and keys.
    func check(_ keys: PairingKeys, expected: String, bumble: [String: Any], test: PairingCase, connection: Connection, log: RadioEventLog, radioPeer: String, stack: Stack) async throws {
        #expect(keys.method?.tableAbbreviation == expected, "BareBLE chose \(keys.method)")
        #expect(bumble["method"] as? String == bumbleName[expected], "Bumble chose \(bumble["method"] ?? "?")")
        #expect(bumble["sc"] as? Bool == test.secureConnections)
        #expect(keys.secureConnections == test.secureConnections)
        #expect(keys.bonded == test.bonding)
        #expect(connection.encryption.isEncrypted)
        let matches = about(radioPeer, stack)
        try await log.wait("encryption-change", where: { matches($0) && $0["encrypted"] as? Bool == true })
        let bumbleKeys = bumble["keys"] as? [String: Any] ?? [:]
        if test.secureConnections {
            #expect(keys.longTermKey.map { Hex.string($0.key.littleEndianBytes).lowercased() } == (bumbleKeys["ltk"] as? String)?.lowercased(), "LTK differs from Bumble's")
        }
        if test.bonding {
            // Bumble's identity is its static random address; it learnt ours.
            #expect(keys.peerIdentity?.address.address == (radioPeer == "peripheral" ? Self.peripheral : Self.centralPeer).address)
            #expect(keys.peerSigningKey != nil)
            #expect(bumbleKeys["irk"] as? String != nil)
            if !test.secureConnections {
                let ourKeys = Set([keys.peerLongTermKey, keys.localLongTermKey].compactMap { $0.map { Hex.string($0.key.littleEndianBytes).lowercased() } })
                let theirs = Set([bumbleKeys["ltk_central"], bumbleKeys["ltk_peripheral"]].compactMap { ($0 as? String)?.lowercased() })
                #expect(!ourKeys.isEmpty && ourKeys == theirs, "legacy LTKs: ours \(ourKeys), Bumble's \(theirs)")
            }
        } else {
            #expect(keys.peerIdentity == nil && keys.peerLongTermKey == nil)
        }
    }

    @Test("BareBLE as initiator: every IO capability pair x legacy/SC x bonding", arguments: PairingCase.all)
    func initiator(_ test: PairingCase) async throws {
        try await matrixCase(test, weInitiate: true)
    }

    @Test("BareBLE as responder: every IO capability pair x legacy/SC x bonding", arguments: PairingCase.all)
    func responder(_ test: PairingCase) async throws {
        try await matrixCase(test, weInitiate: false)
    }

    /// One pairing with Bumble: as initiator against the radio's peripheral, or as
    /// responder to the radio's central (which then starts the pairing itself).
    func matrixCase(_ test: PairingCase, weInitiate: Bool) async throws {
        try await withStack { log, stack in
            let radioPeer = weInitiate ? "peripheral" : "central"
            let connection = weInitiate
                ? try await connectToPeripheral(stack, settings: radioSettings(test))
                : try await acceptFromCentral(stack, settings: radioSettings(test))
            let user = RadioUser(log: log, radioPeer: radioPeer, ourAddress: stack.radioName)
            let manager = try SecurityManager(connection: connection, channels: stack.channels, configuration: configuration(test, stack: stack), delegate: user)
            let keys = weInitiate ? try await manager.pair() : try await manager.nextPairingResult()
            let bumble = try await log.wait("pairing-complete", where: about(radioPeer, stack))
            let expected = test.expectedMethod(weInitiate: weInitiate)
            try await check(keys, expected: expected, bumble: bumble, test: test, connection: connection, log: log, radioPeer: radioPeer, stack: stack)
            if expected == "NC" { #expect(user.compared.withLock { $0.count } == 1) }
            if test.bonding { try checkStoredBond(keys, bumble: bumble, test: test, radioPeer: radioPeer, stack: stack) }
            if !weInitiate {
                let line = "connect-pair central \(stack.radioName)"
                try await log.wait("ack", where: { ($0["command"] as? String)?.hasPrefix(line) == true && $0["paired"] as? Bool == true })
            }
            try await connection.disconnect()
        }
    }

    /// With bonding the keys are stored: saved through a `BondStore` in a temporary
    /// directory, read back from the file by a second store, and compared with what the
    /// pairing produced and with the keys Bumble reports (ours it received, the LTKs).
    func checkStoredBond(_ keys: PairingKeys, bumble: [String: Any], test: PairingCase, radioPeer: String, stack: Stack) throws {
        let directory = TestScratch.path("matrix-bonds")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = BondStore.Identity.public(stack.info.address)
        let produced = keys.bond(createdAt: 1_763_800_000)
        try BondStore(directory: directory, identity: identity).save(produced)
        let reloaded = try BondStore(directory: directory, identity: identity)
        let stored = try #require(reloaded.bond(for: keys.peer), "no bond for \(keys.peer) in the reloaded file")
        #expect(stored == produced, "the file gave back another bond")
        #expect(reloaded.bonds.count == 1)
        #expect(stored.peer == (radioPeer == "peripheral" ? Self.peripheral : Self.centralPeer))
        #expect(stored.secureConnections == test.secureConnections && stored.authenticated == keys.authenticated)
        func hex(_ value: SMPValue128?) -> String? { value.map { Hex.string($0.littleEndianBytes).lowercased() } }
        let bumbleKeys = bumble["keys"] as? [String: Any] ?? [:]
        #expect(stored.authenticated == bumbleKeys["authenticated"] as? Bool, "Bumble: \(bumbleKeys["authenticated"] ?? "?")")
        if test.secureConnections {
            #expect(hex(stored.peerKeys.longTermKey?.key) == (bumbleKeys["ltk"] as? String)?.lowercased())
            #expect(stored.localKeys.longTermKey == stored.peerKeys.longTermKey)
        } else {
            // Each side's distributed LTK is one of Bumble's two, with its EDIV.
            for key in [stored.peerKeys.longTermKey, stored.localKeys.longTermKey] {
                let key = try #require(key, "a legacy bond lacks an LTK: \(stored)")
                let name = try #require(["ltk_central", "ltk_peripheral"].first { (bumbleKeys[$0] as? String)?.lowercased() == hex(key.key) },
                                        "stored LTK \(hex(key.key) ?? "") is not one of Bumble's")
                #expect(bumbleKeys[name + "_ediv"] as? Int == Int(key.ediv))
            }
            #expect(stored.peerKeys.longTermKey != stored.localKeys.longTermKey)
        }
        // Ours as Bumble received them; the peer's present.
        let ourIRK = try #require(stored.localKeys.identityResolvingKey, "our distributed IRK was not stored")
        let ourCSRK = try #require(stored.localKeys.signatureKey?.key, "our distributed CSRK was not stored")
        #expect(hex(ourIRK) == (bumbleKeys["irk"] as? String)?.lowercased(), "Bumble received IRK \(bumbleKeys["irk"] ?? "none")")
        #expect(hex(ourCSRK) == (bumbleKeys["csrk"] as? String)?.lowercased(), "Bumble received CSRK \(bumbleKeys["csrk"] ?? "none")")
        #expect(stored.peerKeys.identityResolvingKey == keys.peerIdentity?.identityResolvingKey && stored.peerKeys.identityResolvingKey != nil)
        #expect(stored.peerKeys.signatureKey?.key == keys.peerSigningKey && stored.peerKeys.signatureKey != nil)
    }

    @Test("a wrong passkey fails with Confirm Value Failed on both sides", arguments: [false, true])
    func wrongPasskey(secureConnections: Bool) async throws {
        try await withStack { log, stack in
            let connection = try await connectToPeripheral(stack, settings: "io=display-only sc=\(secureConnections ? 1 : 0) bonding=1 mitm=1 passkey=111111 stall=off")
            let user = RadioUser(log: log, radioPeer: "peripheral", ourAddress: stack.radioName, wrongPasskey: 222_222)
            let attempts = RepeatedAttemptsRecord()
            let manager = try SecurityManager(
                connection: connection, channels: stack.channels,
                configuration: PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: secureConnections),
                delegate: user, attempts: attempts)
            await #expect(throws: PairingError.peerFailed(.confirmValueFailed)) { _ = try await manager.pair() }
            let matches = about("peripheral", stack)
            try await log.wait("pairing-failed", where: { matches($0) && $0["reason"] as? Int == 0x04 })
            #expect(!connection.encryption.isEncrypted)
            // The failure starts the repeated-attempts wait for this peer: trying again at
            // once is refused before anything is sent.
            do {
                _ = try await manager.pair()
                Issue.record("a second pairing right after a failure was allowed")
            } catch let error as PairingError {
                guard case let .repeatedAttempts(wait) = error else { Issue.record("got \(error)"); return }
                #expect(wait > .zero && wait <= .seconds(2))
            }
            try await connection.disconnect()
        }
    }

    @Test("a peer that stops answering mid-pairing ends in the SMP timeout, and no new pairing runs on that link")
    func peerStopsAnswering() async throws {
        try await withStack { log, stack in
            // Bumble sends its Pairing Response, then nothing.
            let connection = try await connectToPeripheral(stack, settings: "io=no-input-no-output sc=1 bonding=1 passkey=ask stall=1")
            let manager = try SecurityManager(connection: connection, channels: stack.channels, configuration: PairingConfiguration(), smpTimeout: .seconds(2))
            await #expect(throws: PairingError.timedOut) { _ = try await manager.pair() }
            try await log.wait("smp-dropped", where: { $0["peer"] as? String == "peripheral" })
            await #expect(throws: PairingError.linkTimedOutEarlier) { _ = try await manager.pair() }
            #expect(!connection.encryption.isEncrypted)
            try await log.control("pairing peripheral stall=off")
            try await connection.disconnect()
        }
    }

    @Test("a bonded peer re-encrypts without pairing; after it lost the bond re-encryption fails with a typed error")
    func reencryption() async throws {
        try await withStack { log, stack in
            let justWorks = "io=no-input-no-output sc=1 bonding=1 mitm=0 passkey=ask stall=off"
            let first = try await connectToPeripheral(stack, settings: justWorks)
            let keys = try await SecurityManager(connection: first, channels: stack.channels, configuration: PairingConfiguration()).pair()
            try await first.disconnect()

            let second = try await connectToPeripheral(stack, settings: justWorks)
            try await SecurityManager(connection: second, channels: stack.channels, configuration: PairingConfiguration()).encrypt(with: keys.bond(createdAt: 0))
            #expect(second.encryption.isEncrypted)
            try await second.disconnect()

            try await log.control("forget-bonds peripheral")
            let third = try await connectToPeripheral(stack, settings: justWorks)
            let again = try SecurityManager(connection: third, channels: stack.channels, configuration: PairingConfiguration())
            do {
                try await again.encrypt(with: keys.bond(createdAt: 0))
                Issue.record("re-encryption with a forgotten bond succeeded")
            } catch let error as PairingError {
                guard case .reencryptionFailed = error else { Issue.record("expected reencryptionFailed, got \(error)"); return }
            }
            #expect(!third.encryption.isEncrypted)
            if third.isConnected { try await third.disconnect() }
        }
    }

    @Test("the security hook: a read refused for insufficient authentication pairs, then succeeds on the one retry")
    func pairThenRetryOnce() async throws {
        try await withStack { _, stack in
            let connection = try await connectToPeripheral(stack, settings: "io=no-input-no-output sc=1 bonding=1 mitm=0 passkey=ask stall=off")
            let client = ATTClient(bearer: L2CAPBearer(manager: stack.channels, connection: connection.handle), transactionTimeout: .seconds(10))
            let manager = try SecurityManager(connection: connection, channels: stack.channels, configuration: PairingConfiguration())
            let encryptedValue: UInt16 = 52  // B4AE0007, "secret" over an encrypted link (radio README)
            let attempts = Lock(0)
            let value = try await manager.retryingAfterPairing(isInsufficientSecurity: { error in
                guard let code = (error as? ATTError)?.errorCode else { return false }
                return code == .insufficientAuthentication || code == .insufficientEncryption
            }) {
                attempts.withLock { $0 += 1 }
                return try await client.read(encryptedValue).attributeValue
            }
            #expect(value == Array("secret".utf8))
            #expect(attempts.withLock { $0 } == 2)
            #expect(connection.encryption.isEncrypted)
            try await connection.disconnect()
        }
    }

    @Test("Security Request: the peripheral asks and our central pairs; our peripheral asks and the central pairs")
    func securityRequest() async throws {
        try await withStack { log, stack in
            let justWorks = "io=no-input-no-output sc=1 bonding=1 mitm=0 passkey=ask stall=off"
            let connection = try await connectToPeripheral(stack, settings: justWorks)
            let manager = try SecurityManager(connection: connection, channels: stack.channels, configuration: PairingConfiguration(), smpTimeout: .seconds(10))
            try await log.control("request-security peripheral")
            let keys = try await manager.nextPairingResult()
            #expect(keys.method == .justWorks && keys.secureConnections)
            #expect(connection.encryption.isEncrypted)
            try await connection.disconnect()

            let accepted = try await acceptFromCentral(stack, settings: justWorks, flags: "no-pair")
            let responder = try SecurityManager(connection: accepted, channels: stack.channels, configuration: PairingConfiguration(), smpTimeout: .seconds(10))
            let paired = try await responder.pair()
            #expect(paired.secureConnections && accepted.encryption.isEncrypted)
            try await log.wait("security-request", where: about("central", stack))
            try await accepted.disconnect()
        }
    }

    @Test("the capture of legacy and SC pairings decodes in tshark without malformed packets")
    func captureDecodes() async throws {
        let harness = try Self.harness.get()
        var capture = ""
        try await withStack { log, stack in
            capture = "\(harness.captureDirectory)/client-\(stack.info.address.value & 0xFFFF).btsnoop"
            for sc in [false, true] {
                let test = PairingCase(ours: .keyboardDisplay, theirs: .displayYesNo, secureConnections: sc, bonding: true)
                let connection = try await connectToPeripheral(stack, settings: radioSettings(test))
                let user = RadioUser(log: log, radioPeer: "peripheral", ourAddress: stack.radioName)
                _ = try await SecurityManager(connection: connection, channels: stack.channels, configuration: configuration(test, stack: stack), delegate: user).pair()
                try await connection.disconnect()
            }
        }
        let report = try await Tshark.check(capture)
        #expect(report.packets > 40)
        #expect(report.malformed.isEmpty, "tshark: \(report.malformed)")
        let decoded = try Tshark.verbose(capture)
        for name in ["Pairing Request", "Pairing Public Key", "Pairing DHKey Check", "Encryption Information", "Central Identification", "Identity Address Information"] {
            #expect(decoded.contains(name) || decoded.contains(name.replacingOccurrences(of: "Central", with: "Master")), "tshark shows no \(name)")
        }
    }
}
