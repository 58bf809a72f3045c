import ATT
import BareBLE
import BluetoothCore
import Bonding
import Foundation
import HCI
import SMP
import Testing
import TestSupport

/// SMP as responder behind ``PeripheralHost``, against Bumble's SMP in the radio's GATT
/// centrals: pairings the central starts (Just Works, passkey), our Security Request, the
/// bond saved to the policy's store, and the bonded central coming back from a resolvable
/// private address, resolved to its identity and re-encrypted without pairing.
@Suite(.serialized) struct PeripheralHostPairing {
    static let justWorks = "io=no-input-no-output sc=1 mitm=0 bonding=1"

    static func bondDirectory() -> String {
        TestScratch.path("peripheral-bonds")
    }

    /// A Central on a fresh exposed controller whose bonds go to a new store under our
    /// public identity (so the central learns our IRK and finds the bond again).
    func open(pairing: PairingConfiguration = PairingConfiguration(), delegate: (any PairingDelegate)? = nil, privacy: Bool = false) async throws -> (Central, BondStore) {
        let central = try await PeripheralRadio.open()
        let address = try #require(central.controller.info?.address)
        let bonds = try BondStore(directory: Self.bondDirectory(), identity: .public(address))
        central.security = SecurityPolicy(pairing: pairing, delegate: delegate, bonds: bonds, privacy: privacy)
        return (central, bonds)
    }

    func paired(_ events: HostEvents) async throws -> (PairingKeysSummary, Bool) {
        try await events.next("pairing") { event -> (PairingKeysSummary, Bool)? in
            switch event {
            case let .paired(_, keys, saved): return (keys, saved)
            case let .pairingFailed(_, error):
                Issue.record("pairing failed: \(error)")
                return nil
            default: return nil
            }
        }
    }

    @Test("a central pairs with us (Just Works, SC, bonding): the bond is saved under its identity")
    func justWorks() async throws {
        let (central, bonds) = try await open()
        defer { central.close() }
        let (host, events, name, link) = try await PeripheralRadio.accepted(on: central, advertising: "BareBLE-JW", pairing: Self.justWorks)
        defer { withExtendedLifetime(host) {} }
        #expect(link.linkSecurity == .open)
        let ack = try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))
        #expect(ack["paired"] as? Bool == true)
        let (keys, saved) = try await paired(events)
        // What the ATT server will check permissions against.
        #expect(link.linkSecurity == ATTLinkSecurity(isEncrypted: true, isAuthenticated: false, isSecureConnections: true, keySize: 16, hasLongTermKey: true))
        #expect(keys.method == "Just Works" && keys.secureConnections && !keys.authenticated)
        #expect(saved)
        let identity = try PeripheralRadio.address(of: name)
        #expect(keys.identity == identity)
        #expect(bonds.bond(for: identity) != nil)
        #expect(link.isEncrypted)
        #expect(link.identity == identity)
        let bumble = try await PeripheralRadio.log.get().wait("pairing-complete") { $0["peer"] as? String == name }
        #expect(bumble["method"] as? String == "just-works")
    }

    @Test("passkey entry: we display, the central types (MITM, SC)")
    func passkey() async throws {
        let log = try PeripheralRadio.log.get()
        let name = try await PeripheralRadio.addCentral()
        let user = RadioUser(log: log, radioPeer: name, ourAddress: "F0:0D")
        let (central, bonds) = try await open(pairing: PairingConfiguration(ioCapability: .displayOnly, mitm: true), delegate: user)
        defer { central.close() }
        let (host, events, _, link) = try await PeripheralRadio.accepted(
            on: central, advertising: "BareBLE-PK", radioCentral: name, pairing: "io=keyboard-only sc=1 mitm=1 bonding=1 passkey=ask")
        defer { withExtendedLifetime(host) {} }
        let ack = try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))
        #expect(ack["paired"] as? Bool == true, "\(ack)")
        let (keys, saved) = try await paired(events)
        #expect(keys.method == "Passkey Entry (responder displays)" && keys.authenticated && keys.secureConnections)
        let identity = try PeripheralRadio.address(of: name)
        #expect(saved && bonds.bond(for: identity)?.authenticated == true)
        #expect(link.linkSecurity.isAuthenticated && link.linkSecurity.isSecureConnections)
        #expect(user.shown.withLock { $0.count } == 1)
    }

    @Test("the central types a wrong passkey: the pairing fails on both sides and nothing is stored")
    func wrongPasskey() async throws {
        let (central, bonds) = try await open(pairing: PairingConfiguration(ioCapability: .displayOnly, mitm: true))
        defer { central.close() }
        // One chance in a million that our random passkey is this one.
        let (host, events, name, link) = try await PeripheralRadio.accepted(
            on: central, advertising: "BareBLE-WrongPK", pairing: "io=keyboard-only sc=1 mitm=1 bonding=1 passkey=111111")
        defer { withExtendedLifetime(host) {} }
        let ack = try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))
        #expect(ack["paired"] as? Bool == false)
        let failure = try await events.next("pairing failure") { event -> PairingError? in
            if case let .pairingFailed(failed, error) = event, failed === link { error } else { nil }
        }
        #expect("\(failure)".lowercased().contains("confirm"), "\(failure)")
        #expect(!link.isEncrypted)
        #expect(bonds.bond(for: try PeripheralRadio.address(of: name)) == nil)
    }

    @Test("our Security Request: the central pairs; it comes back from an RPA, is resolved to its bond and re-encrypts without pairing")
    func securityRequestThenRPAReconnect() async throws {
        let (central, bonds) = try await open()
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        let (host, events, name, link) = try await PeripheralRadio.accepted(on: central, advertising: "BareBLE-SR", pairing: Self.justWorks)
        defer { withExtendedLifetime(host) {} }
        let outcome = try await link.requestSecurity()
        guard case let .paired(keys, bondSaved) = outcome else {
            Issue.record("expected a pairing, got \(outcome)")
            return
        }
        #expect(bondSaved && keys.bonded)
        let identity = try PeripheralRadio.address(of: name)
        #expect(bonds.bond(for: identity) != nil)
        try await PeripheralRadio.log.get().wait("security-request") { $0["peer"] as? String == name }
        try await PeripheralRadio.central(name, "disconnect")
        _ = try await events.next("disconnection") { if case .disconnected = $0 { true } else { nil } }

        // Back from a resolvable private address of its IRK, as a bonded phone comes back.
        let ack = try await PeripheralRadio.central(name, "connect \(address) rpa")
        let ownAddress = try #require(ack["own_address"] as? String)
        let rpa = try #require(BluetoothAddress(ownAddress))
        #expect(DeviceAddress(rpa, type: .random).kind == .resolvablePrivate)
        let again = try await events.connected()
        #expect(again.address == DeviceAddress(rpa, type: .random))
        #expect(again.identity == identity)
        let mark = try PeripheralRadio.log.get().count
        let encrypted = try await PeripheralRadio.central(name, "encrypt")
        #expect(encrypted["encrypted"] as? Bool == true, "\(encrypted)")
        _ = try await events.next("re-encryption") { event -> Bool? in
            switch event {
            case let .encryptionChanged(link, true) where link === again: return true
            case .paired:
                Issue.record("the bonded central paired again")
                return nil
            default: return nil
            }
        }
        #expect(again.isEncrypted)
        // Protected by the bond's key: its properties, not a pairing's.
        #expect(again.linkSecurity == ATTLinkSecurity(isEncrypted: true, isAuthenticated: false, isSecureConnections: true, keySize: 16, hasLongTermKey: true))
        let later = try PeripheralRadio.log.get().events(since: mark)
        #expect(!later.contains { $0["event"] as? String == "pairing-complete" && $0["peer"] as? String == name })
    }

    @Test("a bonded central answers our Security Request by encrypting with its bond, not by pairing")
    func securityRequestToABondedCentral() async throws {
        let (central, bonds) = try await open()
        defer { central.close() }
        let address = try #require(central.controller.info?.address)
        let (host, events, name, link) = try await PeripheralRadio.accepted(on: central, advertising: "BareBLE-Bonded", pairing: Self.justWorks)
        defer { withExtendedLifetime(host) {} }
        #expect(try await PeripheralRadio.central(name, "pair", timeout: .seconds(100))["paired"] as? Bool == true)
        try await PeripheralRadio.central(name, "disconnect")
        _ = try await events.next("disconnection") { event -> Bool? in
            if case let .disconnected(ended, _) = event, ended === link { true } else { nil }
        }
        try await PeripheralRadio.central(name, "connect \(address) rpa")
        let again = try await events.connected()
        #expect(again.identity == (try PeripheralRadio.address(of: name)))
        let outcome = try await again.requestSecurity()
        guard case let .encryptedWithBond(authenticated, keySize) = outcome else {
            Issue.record("expected the bond's key, got \(outcome)")
            return
        }
        #expect(!authenticated && keySize == 16)
        #expect(again.isEncrypted)
        #expect(bonds.bonds.count == 1)
    }
}
