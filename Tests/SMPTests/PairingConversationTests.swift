import BluetoothCore
import HCI
@testable import SMP
import Testing
import TestSupport

@Suite("SMP pairing conversations")
struct PairingConversationTests {
    static let identity = IdentityKey(identityResolvingKey: SMPValue128(0x1234), address: DeviceAddress(BluetoothAddress(0xF00D_0000_0001), type: .public))
    static let peripheralIdentity = IdentityKey(identityResolvingKey: SMPValue128(0x5678), address: DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random))

    func configuration(_ io: IOCapability, sc: Bool, bonding: Bool, identity: IdentityKey?) -> PairingConfiguration {
        PairingConfiguration(ioCapability: io, bonding: bonding, mitm: true, secureConnections: sc, localIdentity: identity, localSigningKey: SMPValue128(0x99))
    }

    @Test("every IO capability pair x legacy/SC x bonding ends in the table's method with matching keys", arguments: PairingCase.all)
    func matrix(_ test: PairingCase) {
        var pair = PairingPair(
            initiator: configuration(test.ours, sc: test.secureConnections, bonding: test.bonding, identity: Self.identity),
            responder: configuration(test.theirs, sc: test.secureConnections, bonding: test.bonding, identity: Self.peripheralIdentity),
            seed: UInt64(test.ours.rawValue) << 8 | UInt64(test.theirs.rawValue))
        pair.run()
        let want = test.expectedMethod(weInitiate: true)
        let central = pair.keys(.initiator)
        let peripheral = pair.keys(.responder)
        #expect(pair.encrypted)
        #expect(central.map { $0.method?.tableAbbreviation } == want, "central: \(String(describing: pair.results[.initiator]))")
        #expect(peripheral.map { $0.method?.tableAbbreviation } == want, "peripheral: \(String(describing: pair.results[.responder]))")
        #expect(central?.secureConnections == test.secureConnections)
        #expect(central?.authenticated == (want != "JW"))
        #expect(central?.bonded == test.bonding)
        if test.secureConnections {
            #expect(central?.longTermKey != nil && central?.longTermKey == peripheral?.longTermKey)
            #expect(pair.codes.contains(.pairingPublicKey) && !pair.codes.contains(.encryptionInformation))
        }
        if test.bonding, let central, let peripheral {
            // The bonds each side would store: the central's re-encryption key is the one
            // the peripheral's bond answers an LTK request with.
            let centralBond = central.bond(createdAt: 1)
            let peripheralBond = peripheral.bond(createdAt: 1)
            #expect(centralBond.peer == Self.peripheralIdentity.address && peripheralBond.peer == Self.identity.address)
            if let key = centralBond.keyAsCentral {
                #expect(peripheralBond.keyAsPeripheral(encryptedDiversifier: key.ediv, randomNumber: key.rand) == key)
            } else {
                Issue.record("the central's bond has no LTK")
            }
            #expect(centralBond.peerKeys.identityResolvingKey == Self.peripheralIdentity.identityResolvingKey)
            #expect(centralBond.localKeys.identityResolvingKey == Self.identity.identityResolvingKey)
        }
        if test.bonding {
            #expect(central?.peerIdentity == Self.peripheralIdentity)
            #expect(peripheral?.peerIdentity == Self.identity)
            #expect(central?.peerSigningKey == SMPValue128(0x99))
            if !test.secureConnections {
                // Each side's distributed key is the other's peer key, and the central
                // re-encrypts with the key the peripheral answers an LTK request with.
                #expect(central?.peerLongTermKey != nil && central?.peerLongTermKey == peripheral?.localLongTermKey)
                #expect(peripheral?.peerLongTermKey == central?.localLongTermKey)
                if let key = central?.keyAsCentral {
                    #expect(peripheral?.keyAsPeripheral(encryptedDiversifier: key.ediv, randomNumber: key.rand) == key)
                }
            }
        } else {
            #expect(central?.peerIdentity == nil && central?.peerLongTermKey == nil)
            #expect(!pair.codes.contains(.identityInformation) && !pair.codes.contains(.encryptionInformation))
        }
        if want == "NC" { #expect(pair.compared[.initiator] != nil && pair.compared[.initiator] == pair.compared[.responder]) }
        if want == "ID" { #expect(pair.displayed[.initiator] != nil) }
        if want == "RD" { #expect(pair.displayed[.responder] != nil) }
        if want == "BI" && test.secureConnections {
            // 20 rounds: a Confirm and a Random each way per round.
            #expect(pair.codes.filter { $0 == .pairingConfirm }.count == 40)
        }
    }

    @Test("without MITM on either side every pair is Just Works")
    func noMITMIsJustWorks() {
        for sc in [false, true] {
            var pair = PairingPair(
                initiator: PairingConfiguration(ioCapability: .keyboardDisplay, secureConnections: sc),
                responder: PairingConfiguration(ioCapability: .keyboardDisplay, secureConnections: sc))
            pair.run()
            #expect(pair.keys(.initiator)?.method == .justWorks)
            #expect(pair.keys(.initiator)?.authenticated == false)
        }
    }

    @Test("legacy and SC passkey entry with a wrong passkey fail with Confirm Value Failed and no keys", arguments: [false, true])
    func wrongPasskey(sc: Bool) {
        var pair = PairingPair(
            initiator: configuration(.keyboardOnly, sc: sc, bonding: true, identity: nil),
            responder: configuration(.displayOnly, sc: sc, bonding: true, identity: nil))
        pair.typedPasskey[.initiator] = 111_111
        pair.run()
        #expect(pair.displayed[.responder] != 111_111)
        #expect(!pair.encrypted)
        #expect(pair.keys(.initiator) == nil && pair.keys(.responder) == nil)
        #expect(pair.air.contains { $0.1 == .pairingFailed(.confirmValueFailed) })
        // Whichever side checks first refuses; the other hears the reason.
        let errors = [pair.error(.initiator), pair.error(.responder)]
        #expect(errors.contains(.peerFailed(.confirmValueFailed)))
    }

    @Test("a user rejecting the numeric comparison fails with Numeric Comparison Failed")
    func numericComparisonRejected() {
        var pair = PairingPair(
            initiator: configuration(.displayYesNo, sc: true, bonding: true, identity: nil),
            responder: configuration(.displayYesNo, sc: true, bonding: true, identity: nil))
        pair.confirmNumbers = false
        pair.run()
        #expect(!pair.encrypted)
        #expect(pair.air.contains { $0.1 == .pairingFailed(.numericComparisonFailed) })
    }

    @Test("SC OOB: both sides hold the other's data; a wrong confirm is Confirm Value Failed")
    func secureConnectionsOOB() {
        var probe = PairingPair(initiator: PairingConfiguration(), responder: PairingConfiguration(), seed: 7)
        let initiatorData = probe.initiator.localOOBData()
        let responderData = probe.responder.localOOBData()
        var pair = probe
        pair.initiator = PairingMachine(role: .initiator, configuration: PairingConfiguration(peerOOBData: .secureConnections(random: responderData.random, confirm: responderData.confirm)),
                                        localAddress: PairingPair.centralAddress, peerAddress: PairingPair.peripheralAddress, random: SeededRandom(seed: 7))
        pair.responder = PairingMachine(role: .responder, configuration: PairingConfiguration(peerOOBData: .secureConnections(random: initiatorData.random, confirm: initiatorData.confirm)),
                                        localAddress: PairingPair.peripheralAddress, peerAddress: PairingPair.centralAddress, random: SeededRandom(seed: 1007))
        // Same seeds: the machines make the same key pairs and randoms the probe showed.
        _ = pair.initiator.localOOBData()
        _ = pair.responder.localOOBData()
        pair.run()
        #expect(pair.keys(.initiator)?.method == .outOfBand)
        #expect(pair.keys(.initiator)?.longTermKey == pair.keys(.responder)?.longTermKey)
        #expect(pair.keys(.initiator)?.authenticated == true)

        probe.responder = PairingMachine(role: .responder, configuration: PairingConfiguration(peerOOBData: .secureConnections(random: initiatorData.random, confirm: SMPValue128(1))),
                                         localAddress: PairingPair.peripheralAddress, peerAddress: PairingPair.centralAddress, random: SeededRandom(seed: 1007))
        probe.initiator = PairingMachine(role: .initiator, configuration: PairingConfiguration(), localAddress: PairingPair.centralAddress, peerAddress: PairingPair.peripheralAddress, random: SeededRandom(seed: 7))
        _ = probe.initiator.localOOBData()
        probe.run()
        #expect(probe.air.contains { $0.1 == .pairingFailed(.confirmValueFailed) })
        #expect(probe.keys(.responder) == nil)
    }

    @Test("legacy OOB uses the shared TK; without a TK on one side it is not OOB")
    func legacyOOB() {
        let tk = SMPValue128(0x0123_4567_89AB_CDEF)
        var pair = PairingPair(
            initiator: PairingConfiguration(secureConnections: false, peerOOBData: .legacy(temporaryKey: tk)),
            responder: PairingConfiguration(secureConnections: false, peerOOBData: .legacy(temporaryKey: tk)))
        pair.run()
        #expect(pair.keys(.initiator)?.method == .outOfBand)
        var wrong = PairingPair(
            initiator: PairingConfiguration(secureConnections: false, peerOOBData: .legacy(temporaryKey: tk)),
            responder: PairingConfiguration(secureConnections: false, peerOOBData: .legacy(temporaryKey: SMPValue128(5))))
        wrong.run()
        #expect(wrong.air.contains { $0.1 == .pairingFailed(.confirmValueFailed) })
    }

    @Test("Secure Connections Only refuses a legacy peer and short keys")
    func secureConnectionsOnly() {
        var legacy = PairingPair(
            initiator: PairingConfiguration(secureConnections: true, secureConnectionsOnly: true),
            responder: PairingConfiguration(secureConnections: false))
        legacy.run()
        #expect(legacy.error(.initiator) == .refused(.authenticationRequirements, "Secure Connections Only mode refuses legacy pairing"))
        #expect(legacy.keys(.responder) == nil)

        var responderOnly = PairingPair(
            initiator: PairingConfiguration(secureConnections: false),
            responder: PairingConfiguration(secureConnections: true, secureConnectionsOnly: true))
        responderOnly.run()
        #expect(responderOnly.air.last?.1 == .pairingFailed(.authenticationRequirements))
    }

    @Test("minimum key size: a configuration outside 7 ... 16 is refused before anything is sent", arguments: [0, 6, 17])
    func minimumKeySizeConfiguration(size: Int) {
        var machine = PairingMachine(role: .initiator, configuration: PairingConfiguration(minimumKeySize: size),
                                     localAddress: PairingPair.centralAddress, peerAddress: PairingPair.peripheralAddress, random: SeededRandom(seed: 1))
        let actions = machine.handle(.pair)
        #expect(actions.count == 1)
        if case .failed(.invalidConfiguration)? = actions.first {} else { Issue.record("got \(actions)") }
    }
}
