import BluetoothCore
import HCI
@testable import SMP
import Testing
import TestSupport

/// A hostile peer (SweynTooth family and friends) plays scripted PDUs at our machine:
/// every attack must end in Pairing Failed with the right reason, no keys, no crash.
struct Script {
    var machine: PairingMachine
    /// Everything the machine did, in order.
    var actions: [PairingAction] = []

    init(_ role: PairingMachine.Role, _ configuration: PairingConfiguration = PairingConfiguration(), seed: UInt64 = 3) {
        let (local, peer) = role == .initiator ? (PairingPair.centralAddress, PairingPair.peripheralAddress) : (PairingPair.peripheralAddress, PairingPair.centralAddress)
        machine = PairingMachine(role: role, configuration: configuration, localAddress: local, peerAddress: peer, random: SeededRandom(seed: seed))
    }

    @discardableResult
    mutating func input(_ input: PairingInput) -> [PairingAction] {
        let out = machine.handle(input)
        actions += out
        return out
    }

    @discardableResult
    mutating func peer(_ pdu: SMPPDU) -> [PairingAction] { input(.received(pdu.encode())) }

    @discardableResult
    mutating func peer(bytes: [UInt8]) -> [PairingAction] { input(.received(bytes)) }

    var sent: [SMPPDU] { actions.compactMap { if case let .send(pdu) = $0 { return pdu } else { return nil } } }
    var lastSent: SMPPDU? { sent.last }
    var completed: Bool { actions.contains { if case .completed = $0 { return true } else { return false } } }
    var failure: PairingError? { actions.compactMap { if case let .failed(error) = $0 { return error } else { return nil } }.last }

    /// The run ended with us sending Pairing Failed `reason` and producing no keys.
    func refused(_ reason: PairingFailedReason, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(lastSent == .pairingFailed(reason), sourceLocation: sourceLocation)
        #expect(!completed, sourceLocation: sourceLocation)
        if case let .refused(got, _)? = failure {
            #expect(got == reason, sourceLocation: sourceLocation)
        } else {
            Issue.record("no refusal reported: \(String(describing: failure))", sourceLocation: sourceLocation)
        }
        #expect(!machine.isPairing, sourceLocation: sourceLocation)
    }
}

let secureJustWorks = PairingFeatures(
    ioCapability: .noInputNoOutput, authenticationRequirements: [.bonding, .secureConnections],
    initiatorKeyDistribution: [.encryptionKey, .identityKey], responderKeyDistribution: [.encryptionKey, .identityKey])

/// A response our default initiator accepts (it distributes only EncKey without an identity).
let secureResponse = PairingFeatures(
    ioCapability: .noInputNoOutput, authenticationRequirements: [.bonding, .secureConnections],
    initiatorKeyDistribution: [.encryptionKey], responderKeyDistribution: [.encryptionKey, .identityKey])

func features(keySize: UInt8, sc: Bool = true, response: Bool = false) -> PairingFeatures {
    var features = response ? secureResponse : secureJustWorks
    features.maximumEncryptionKeySize = keySize
    if !sc { features.authenticationRequirements.remove(.secureConnections) }
    return features
}

@Suite("SMP hostile peer")
struct HostilePeerTests {
    @Test("maximum key size 0, 6 and 17 in a Pairing Request", arguments: [(UInt8(0), PairingFailedReason.invalidParameters), (6, .encryptionKeySize), (17, .invalidParameters), (15, .encryptionKeySize)])
    func keySizeInRequest(size: UInt8, reason: PairingFailedReason) {
        var script = Script(.responder)
        script.peer(.pairingRequest(features(keySize: size)))
        script.refused(reason)
    }

    @Test("maximum key size 0, 6 and 17 in a Pairing Response", arguments: [(UInt8(0), PairingFailedReason.invalidParameters), (6, .encryptionKeySize), (17, .invalidParameters)])
    func keySizeInResponse(size: UInt8, reason: PairingFailedReason) {
        var script = Script(.initiator)
        script.input(.pair)
        script.peer(.pairingResponse(features(keySize: size, response: true)))
        script.refused(reason)
    }

    @Test("a configured minimum of 7 accepts 7-octet keys and masks the LTK to 7 octets")
    func shortKeysWhenAllowed() {
        var pair = PairingPair(initiator: PairingConfiguration(minimumKeySize: 7), responder: PairingConfiguration(minimumKeySize: 7))
        // The responder offers only 7 octets: its response is what the initiator sees.
        var script = Script(.responder, PairingConfiguration(minimumKeySize: 7))
        script.peer(.pairingRequest(features(keySize: 7)))
        #expect(script.sent.first.map { if case .pairingResponse = $0 { true } else { false } } == true)
        pair.run()
        #expect(pair.keys(.initiator)?.keySize == 16)
        var initiator = Script(.initiator, PairingConfiguration(minimumKeySize: 7))
        initiator.input(.pair)
        initiator.peer(.pairingResponse(features(keySize: 7, response: true)))
        #expect(initiator.machine.context.keySize == 7)
        #expect(initiator.machine.masked(SMPValue128(UInt128.max)) == SMPValue128((UInt128(1) << 56) - 1))
    }

    @Test("wrong lengths and unknown codes", arguments: [
        ([UInt8](), PairingFailedReason.invalidParameters),
        ([0x01, 0x03, 0x00, 0x01, 0x10, 0x07], .invalidParameters),             // request one octet short
        ([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07, 0x00], .invalidParameters), // one octet long
        ([0x01, 0x03, 0x02, 0x01, 0x10, 0x07, 0x07], .invalidParameters),       // reserved OOB flag
        ([0x0F], .commandNotSupported),
        ([0xFF, 0x00], .commandNotSupported),
    ])
    func malformed(bytes: [UInt8], reason: PairingFailedReason) {
        var script = Script(.responder)
        script.peer(bytes: bytes)
        script.refused(reason)
    }

    @Test("a confirm of 16 octets in the middle of a pairing is Invalid Parameters")
    func shortConfirm() {
        var script = Script(.responder)
        script.peer(.pairingRequest(features(keySize: 16, sc: false)))
        script.peer(bytes: [0x03] + [UInt8](repeating: 0xAA, count: 15))
        script.refused(.invalidParameters)
    }

    @Test("out-of-state PDUs", arguments: [
        SMPPDU.pairingConfirm(SMPValue128(1)), .pairingRandom(SMPValue128(2)), .pairingDHKeyCheck(SMPValue128(3)),
        .encryptionInformation(longTermKey: SMPValue128(4)), .identityInformation(identityResolvingKey: SMPValue128(5)),
        .pairingPublicKey(P256PublicKey.debug),
    ])
    func outOfStateWhenIdle(pdu: SMPPDU) {
        var script = Script(.responder)
        script.peer(pdu)
        script.refused(.unspecifiedReason)
    }

    @Test("commands of the other role are Command Not Supported")
    func wrongRole() {
        var central = Script(.initiator)
        central.peer(.pairingRequest(secureJustWorks))
        central.refused(.commandNotSupported)
        var peripheral = Script(.responder)
        peripheral.peer(.pairingResponse(secureJustWorks))
        peripheral.refused(.commandNotSupported)
        var peripheral2 = Script(.responder)
        peripheral2.peer(.securityRequest([.bonding]))
        peripheral2.refused(.commandNotSupported)
    }

    @Test("legacy: a Pairing Random before any confirm, and key distribution before encryption")
    func legacyOutOfOrder() {
        var script = Script(.responder)
        script.peer(.pairingRequest(features(keySize: 16, sc: false)))
        script.peer(.pairingRandom(SMPValue128(9)))
        script.refused(.unspecifiedReason)

        var early = Script(.responder)
        early.peer(.pairingRequest(features(keySize: 16, sc: false)))
        early.peer(.encryptionInformation(longTermKey: SMPValue128(9)))
        early.refused(.unspecifiedReason)
    }

    @Test("a public key off the curve, with X = Y = 0, or with a coordinate >= p is Invalid Parameters", arguments: [
        P256PublicKey(x: SMPValue256(high: 0, low: 1), y: SMPValue256(high: 0, low: 1)),
        P256PublicKey(x: .zero, y: .zero),
        P256PublicKey(x: SMPValue256(high: UInt128.max, low: UInt128.max), y: P256PublicKey.debug.y),
    ])
    func badPublicKey(key: P256PublicKey) {
        var script = Script(.responder)
        script.peer(.pairingRequest(secureJustWorks))
        script.peer(.pairingPublicKey(key))
        script.refused(.invalidParameters)
        // Our public key was never sent: nothing to attack with.
        #expect(!script.sent.contains { if case .pairingPublicKey = $0 { true } else { false } })
    }

    @Test("a responder reflecting our own public key is refused")
    func reflectedPublicKey() {
        var script = Script(.initiator)
        script.input(.pair)
        script.peer(.pairingResponse(secureResponse))
        guard case let .pairingPublicKey(ours)? = script.lastSent else { Issue.record("no public key sent"); return }
        script.peer(.pairingPublicKey(ours))
        script.refused(.invalidParameters)
    }

    @Test("the debug key is refused unless allowed")
    func debugKey() {
        var script = Script(.responder)
        script.peer(.pairingRequest(secureJustWorks))
        script.peer(.pairingPublicKey(.debug))
        script.refused(.invalidParameters)
        var allowed = Script(.responder, PairingConfiguration(allowDebugKeys: true))
        allowed.peer(.pairingRequest(secureJustWorks))
        allowed.peer(.pairingPublicKey(.debug))
        #expect(allowed.machine.isPairing)
    }

    /// Brings our responder to the point where it waits for Ea (SC Just Works).
    func responderAwaitingCheck() -> Script {
        var script = Script(.responder)
        script.peer(.pairingRequest(secureJustWorks))
        let attacker = try! P256KeyPair(privateKey: SMPValue256(high: 0, low: 0x1234_5678))
        script.peer(.pairingPublicKey(attacker.publicKey))
        script.peer(.pairingRandom(SMPValue128(0x77)))
        return script
    }

    @Test("skipped DHKey check: encrypting without Ea gets a negative reply and Pairing Failed")
    func skippedDHKeyCheck() {
        var script = responderAwaitingCheck()
        #expect(script.machine.isPairing)
        let out = script.input(.longTermKeyRequested(encryptedDiversifier: 0, randomNumber: 0))
        #expect(out.contains(.replyLongTermKey(nil)))
        script.refused(.unspecifiedReason)
    }

    @Test("a wrong Ea is DHKey Check Failed, and no LTK is handed to the controller afterwards")
    func wrongDHKeyCheck() {
        var script = responderAwaitingCheck()
        script.peer(.pairingDHKeyCheck(SMPValue128(0xBAD)))
        script.refused(.dhKeyCheckFailed)
        #expect(script.input(.longTermKeyRequested(encryptedDiversifier: 0, randomNumber: 0)) == [.replyLongTermKey(nil)])
    }

    @Test("zero LTK request: an idle peripheral gives no key (the driver then asks the bonds)")
    func zeroLTKRequest() {
        var idle = Script(.responder)
        #expect(idle.input(.longTermKeyRequested(encryptedDiversifier: 0, randomNumber: 0)) == [.replyLongTermKey(nil)])
        var midway = Script(.responder)
        midway.peer(.pairingRequest(features(keySize: 16, sc: false)))
        #expect(midway.input(.longTermKeyRequested(encryptedDiversifier: 0, randomNumber: 0)).contains(.replyLongTermKey(nil)))
        midway.refused(.unspecifiedReason)
    }

    @Test("a responder skipping Eb and sending keys is refused before any encryption")
    func responderSkipsCheck() {
        var script = Script(.initiator, PairingConfiguration())
        script.input(.pair)
        script.peer(.pairingResponse(secureResponse))
        #expect(script.machine.isPairing)
        script.peer(.encryptionInformation(longTermKey: SMPValue128(1)))
        script.refused(.unspecifiedReason)
        #expect(!script.actions.contains { if case .startEncryption = $0 { true } else { false } })
    }

    @Test("an all-zero distributed LTK and a non-static random identity are Invalid Parameters")
    func badDistributedKeys() {
        var pair = PairingPair(initiator: PairingConfiguration(secureConnections: false), responder: PairingConfiguration(secureConnections: false))
        pair.run()
        // Replay: a legacy initiator that reached key distribution receives a zero LTK.
        var script = Script(.initiator, PairingConfiguration(secureConnections: false))
        script.machine.step = .distributingKeys
        script.machine.context.response = features(keySize: 16, sc: false)
        script.machine.context.keys = PairingKeys(peer: PairingPair.peripheralAddress, bonded: true, secureConnections: false, authenticated: false, keySize: 16, method: .justWorks)
        script.machine.context.expectedFromPeer = [.encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation]
        script.peer(.encryptionInformation(longTermKey: .zero))
        script.refused(.invalidParameters)

        var identity = script
        identity.actions = []
        identity.machine.step = .distributingKeys
        identity.machine.context.keys = PairingKeys(peer: PairingPair.peripheralAddress, bonded: true, secureConnections: false, authenticated: false, keySize: 16, method: .justWorks)
        identity.machine.context.expectedFromPeer = [.identityInformation, .identityAddressInformation]
        identity.peer(.identityInformation(identityResolvingKey: SMPValue128(5)))
        identity.peer(.identityAddressInformation(DeviceAddress(BluetoothAddress(0x4000_0000_0001), type: .random)))
        identity.refused(.invalidParameters)
    }

    @Test("a controller reporting a shorter key than negotiated ends the pairing with Encryption Key Size")
    func shortControllerKey() {
        var pair = PairingPair(initiator: PairingConfiguration(), responder: PairingConfiguration())
        pair.run()
        #expect(pair.keys(.responder) != nil)
        // A central waiting for the responder's keys when the size is read as 7.
        var script = Script(.initiator)
        script.input(.pair)
        script.peer(.pairingResponse(secureResponse))
        script.machine.step = .distributingKeys
        script.machine.context.expectedFromPeer = [.identityInformation]
        script.input(.encryptionKeySizeRead(7))
        script.refused(.encryptionKeySize)
        // A size the controller failed to read is not a pass: the key cannot be checked.
        var unread = Script(.initiator)
        unread.input(.pair)
        unread.peer(.pairingResponse(secureResponse))
        unread.machine.step = .distributingKeys
        unread.machine.context.expectedFromPeer = [.identityInformation]
        unread.input(.encryptionKeySizeUnreadable(.unknownConnectionIdentifier))
        unread.refused(.encryptionKeySize)
        // A v2 change with a short key is refused at once.
        var v2 = Script(.initiator)
        v2.input(.pair)
        v2.peer(.pairingResponse(secureResponse))
        v2.machine.step = .awaitingEncryption
        v2.input(.encryptionChanged(keySize: 10))
        v2.refused(.encryptionKeySize)
    }

    @Test("the SMP timeout ends the pairing; afterwards nothing is sent on the link")
    func timeout() {
        var script = Script(.responder)
        script.peer(.pairingRequest(secureJustWorks))
        #expect(script.input(.timerExpired) == [.stopTimer, .failed(.timedOut)])
        #expect(script.peer(.pairingRequest(secureJustWorks)).isEmpty)
        #expect(script.peer(bytes: [0xFF]).isEmpty)
        #expect(script.input(.pair) == [.failed(.linkTimedOutEarlier)])
        #expect(script.input(.longTermKeyRequested(encryptedDiversifier: 0, randomNumber: 0)) == [.replyLongTermKey(nil)])
    }

    @Test("the SMP timer restarts only with a PDU we queue, never with what the peer sends (Vol 3 Part H 3.4)")
    func timerFollowsOurPDUs() {
        var script = Script(.initiator, PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: false))
        #expect(script.input(.pair).prefix(2) == [.startDeadline, .restartTimer])
        // A Security Request while we wait for the Pairing Response: ignored, timer untouched.
        #expect(script.peer(.securityRequest([.bonding])).isEmpty)
        let response = script.peer(.pairingResponse(PairingFeatures(
            ioCapability: .displayOnly, authenticationRequirements: [.bonding, .mitm],
            initiatorKeyDistribution: [.encryptionKey], responderKeyDistribution: [.encryptionKey])))
        #expect(response == [.requestPasskey])
        // Keypresses while our user types: ignored, timer untouched.
        for _ in 0..<3 { #expect(script.peer(.pairingKeypressNotification(.passkeyDigitEntered)).isEmpty) }
        // Our Mconfirm restarts it.
        let typed = script.input(.passkeyEntered(123_456))
        #expect(typed.first == .restartTimer && typed.contains { $0.isSend })
    }

    /// Legacy passkey entry as central: a peripheral that answers our Mconfirm with it and
    /// our Mrand with it passed c1 (one-to-one in the random), then had Mconfirm and Mrand
    /// to find the 20-bit TK offline: an authenticated key without knowing the passkey.
    /// Found by a review; failed before (the machine started encryption).
    @Test("legacy: a peer that reflects our confirm and random is refused with Confirm Value Failed")
    func reflectedConfirmAndRandomAreRefused() {
        var script = Script(.initiator, PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: false))
        script.input(.pair)
        script.peer(.pairingResponse(PairingFeatures(
            ioCapability: .displayOnly, authenticationRequirements: [.bonding, .mitm],
            initiatorKeyDistribution: [.encryptionKey], responderKeyDistribution: [.encryptionKey])))
        let typed = script.input(.passkeyEntered(123_456))
        guard case let .send(.pairingConfirm(mconfirm))? = typed.first(where: \.isSend) else {
            Issue.record("no Mconfirm: \(typed)")
            return
        }
        let random = script.peer(.pairingConfirm(mconfirm))
        guard case let .send(.pairingRandom(mrand))? = random.first(where: \.isSend) else {
            Issue.record("no Mrand: \(random)")
            return
        }
        let answer = script.peer(.pairingRandom(mrand))
        #expect(answer.contains(.send(.pairingFailed(.confirmValueFailed))), "\(answer)")
        #expect(!answer.contains { if case .startEncryption = $0 { true } else { false } })
    }

    @Test("the pairing deadline ends a running pairing with Unspecified Reason and says what was awaited")
    func deadline() {
        var script = Script(.initiator, PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: false))
        #expect(script.input(.deadlineExpired(after: .seconds(120))).isEmpty)  // no pairing: nothing to end
        script.input(.pair)
        #expect(script.input(.deadlineExpired(after: .seconds(120))) == [
            .stopTimer, .send(.pairingFailed(.unspecifiedReason)), .failed(.deadlineExceeded(.pairingResponse, after: .seconds(120))),
        ])
        var typing = Script(.initiator, PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: false))
        typing.input(.pair)
        typing.peer(.pairingResponse(PairingFeatures(
            ioCapability: .displayOnly, authenticationRequirements: [.bonding, .mitm],
            initiatorKeyDistribution: [.encryptionKey], responderKeyDistribution: [.encryptionKey])))
        #expect(typing.input(.deadlineExpired(after: .seconds(1))).last == .failed(.deadlineExceeded(.user, after: .seconds(1))))
        #expect(typing.input(.pair).contains(.startDeadline))  // a new pairing may start on the link
    }

    @Test("repeated attempts: a blocked peer is refused; the wait doubles and is forgotten on success")
    func repeatedAttempts() {
        var script = Script(.responder)
        script.machine.repeatedAttemptsBlocked = true
        script.peer(.pairingRequest(secureJustWorks))
        script.refused(.repeatedAttempts)

        var record = RepeatedAttempts(initial: .seconds(2), maximum: .seconds(16))
        let peer = BluetoothAddress(0xC44B_4D00_0001)
        let start = ContinuousClock.now
        #expect(record.remainingWait(peer, at: start) == nil)
        record.failed(peer, at: start)
        #expect(record.remainingWait(peer, at: start) == .seconds(2))
        record.failed(peer, at: start)
        #expect(record.remainingWait(peer, at: start) == .seconds(4))
        for _ in 0..<5 { record.failed(peer, at: start) }
        #expect(record.remainingWait(peer, at: start) == .seconds(16))
        #expect(record.remainingWait(peer, at: start + .seconds(17)) == nil)
        #expect(record.remainingWait(BluetoothAddress(1), at: start) == nil)
        record.succeeded(peer)
        #expect(record.remainingWait(peer, at: start) == nil)
        #expect(RepeatedAttempts.counts(.peerFailed(.confirmValueFailed)))
        #expect(!RepeatedAttempts.counts(.peerFailed(.pairingNotSupported)))
    }

    @Test("pairing switched off answers Pairing Not Supported; MITM required refuses Just Works")
    func policyRefusals() {
        var off = Script(.responder, PairingConfiguration(pairable: false))
        off.peer(.pairingRequest(secureJustWorks))
        off.refused(.pairingNotSupported)
        var strict = Script(.responder, PairingConfiguration(requireMITM: true))
        strict.peer(.pairingRequest(secureJustWorks))
        strict.refused(.authenticationRequirements)
        var reserved = Script(.responder)
        var request = secureJustWorks
        request.ioCapability = IOCapability(rawValue: 9)
        reserved.peer(.pairingRequest(request))
        reserved.refused(.invalidParameters)
    }

    @Test("a bonded peer's weaker re-pairing is refused and its bond kept; one at least as strong goes on; the option off lets any through")
    func weakerRepairing() {
        let passkeyBond = KeyStrength(authenticated: true, secureConnections: true, keySize: 16)
        let justWorksBond = KeyStrength(authenticated: false, secureConnections: true, keySize: 16)
        func responder(over bond: KeyStrength, _ request: PairingFeatures, _ configuration: PairingConfiguration = PairingConfiguration()) -> Script {
            var script = Script(.responder, configuration)
            script.machine.storedBondStrength = bond
            script.peer(.pairingRequest(request))
            return script
        }
        // Just Works over a bond made with a passkey: the attacker's downgrade.
        let downgrade = responder(over: passkeyBond, secureJustWorks)
        downgrade.refused(.authenticationRequirements)
        #expect("\(downgrade.failure!)".contains("unauthenticated (Just Works) instead of authenticated"))
        // Legacy over Secure Connections, and a shorter key.
        var legacy = secureJustWorks
        legacy.authenticationRequirements.remove(.secureConnections)
        responder(over: justWorksBond, legacy).refused(.authenticationRequirements)
        var short = secureJustWorks
        short.maximumEncryptionKeySize = 10
        responder(over: justWorksBond, short, PairingConfiguration(minimumKeySize: 7)).refused(.authenticationRequirements)
        // As strong as the bond (a phone that forgot us pairs again), or no bond: answered.
        for script in [responder(over: justWorksBond, secureJustWorks), Script(.responder)] {
            var script = script
            if script.sent.isEmpty { script.peer(.pairingRequest(secureJustWorks)) }
            #expect(script.sent.first.map { if case .pairingResponse = $0 { true } else { false } } == true)
            #expect(script.failure == nil)
        }
        // The option off: any pairing replaces the bond.
        #expect(responder(over: passkeyBond, secureJustWorks, PairingConfiguration(refusesWeakerRepairing: false)).failure == nil)
        // As initiator the Pairing Response decides.
        var initiator = Script(.initiator)
        initiator.machine.storedBondStrength = passkeyBond
        initiator.input(.pair)
        initiator.peer(.pairingResponse(secureResponse))
        initiator.refused(.authenticationRequirements)
    }

    @Test("a Pairing Failed from the peer ends the pairing without an answer")
    func peerFails() {
        var script = Script(.initiator)
        script.input(.pair)
        let out = script.peer(.pairingFailed(.pairingNotSupported))
        #expect(out == [.stopTimer, .failed(.peerFailed(.pairingNotSupported))])
        #expect(script.peer(.pairingFailed(.unspecifiedReason)).isEmpty)
    }

    @Test("random bytes never crash the machine in any role", arguments: [PairingMachine.Role.initiator, .responder])
    func fuzz(role: PairingMachine.Role) {
        var random = SeededRandom(seed: 0x5EED)
        for round in 0..<2_000 {
            var script = Script(role, seed: UInt64(round))
            if role == .initiator { script.input(.pair) }
            for _ in 0..<4 {
                var bytes = random.bytes(lengths: 0...70)
                if !bytes.isEmpty, Bool.random(using: &random) { bytes[0] = UInt8.random(in: 1...0x0E, using: &random) }
                script.peer(bytes: bytes)
            }
            #expect(!script.completed)
        }
    }
}

/// Hands out fixed 64-bit words first (to place the specification's sample keys and
/// nonces where the machine draws randomness), then seeded ones.
struct ScriptedRandom: RandomNumberGenerator, Sendable {
    var words: [UInt64]
    var rest = SeededRandom(seed: 99)

    init(_ values: [UInt128]) {
        words = values.flatMap { [UInt64(truncatingIfNeeded: $0 >> 64), UInt64(truncatingIfNeeded: $0)] }
    }

    mutating func next() -> UInt64 {
        words.isEmpty ? rest.next() : words.removeFirst()
    }
}

@Suite("SMP sample-data conversation")
struct SampleDataConversationTests {
    /// Our responder holds the sample private key B and draws Nb = the sample N2; the
    /// scripted initiator is device A of Appendix D (private key A, the debug key, so debug
    /// keys are allowed here), at address A1, sending Na = the sample N1. The conversation
    /// must produce the sample DHKey's f5 outputs: Eb with the sample MacKey, and the
    /// sample LTK handed to the controller.
    @Test func secureConnectionsJustWorksWithAppendixDValues() throws {
        let b = SampleData.privateKeyB
        var machine = PairingMachine(
            role: .responder, configuration: PairingConfiguration(allowDebugKeys: true),
            localAddress: SampleData.a2, peerAddress: SampleData.a1,
            random: ScriptedRandom([b.high, b.low, SampleData.n2.value]))
        let request = PairingFeatures(ioCapability: .noInputNoOutput, authenticationRequirements: [.secureConnections],
                                      initiatorKeyDistribution: [], responderKeyDistribution: [])
        var out = machine.handle(.received(SMPPDU.pairingRequest(request).encode()))
        guard case let .send(.pairingResponse(response))? = out.first(where: \.isSend) else { Issue.record("no response: \(out)"); return }

        out = machine.handle(.received(SMPPDU.pairingPublicKey(SampleData.publicKeyA).encode()))
        let sent = out.compactMap { if case let .send(pdu) = $0 { pdu } else { nil } }
        #expect(sent.first == .pairingPublicKey(SampleData.publicKeyB))
        #expect(sent.last == .pairingConfirm(CryptoToolbox.f4(u: SampleData.publicKeyB.x, v: SampleData.publicKeyA.x, x: SampleData.n2, z: 0)))

        out = machine.handle(.received(SMPPDU.pairingRandom(SampleData.n1).encode()))
        #expect(out.contains(.send(.pairingRandom(SampleData.n2))))

        let ea = CryptoToolbox.f6(w: SampleData.macKey, n1: SampleData.n1, n2: SampleData.n2, r: .zero, ioCap: request.ioCap, a1: SampleData.a1, a2: SampleData.a2)
        out = machine.handle(.received(SMPPDU.pairingDHKeyCheck(ea).encode()))
        let eb = CryptoToolbox.f6(w: SampleData.macKey, n1: SampleData.n2, n2: SampleData.n1, r: .zero, ioCap: response.ioCap, a1: SampleData.a2, a2: SampleData.a1)
        #expect(out.contains(.send(.pairingDHKeyCheck(eb))))
        #expect(machine.handle(.longTermKeyRequested(encryptedDiversifier: 0, randomNumber: 0)) == [.replyLongTermKey(LongTermKey(key: SampleData.longTermKey, ediv: 0, rand: 0, keySize: 16))])
        out = machine.handle(.encryptionChanged(keySize: 16))
        guard case let .completed(keys)? = out.last else { Issue.record("not completed: \(out)"); return }
        #expect(keys.longTermKey?.key == SampleData.longTermKey)
    }
}
