@testable import BareBLE
import BluetoothCore
import Bonding
import SMP
import Testing
import TestSupport

/// Which pairings' keys reach the bond store when a pairing ends.
@Suite struct BondSavingTests {
    static let local = BluetoothAddress("F0:0D:00:00:00:01")!

    static func keys(from peer: DeviceAddress, identity: DeviceAddress? = nil) -> PairingKeys {
        var keys = PairingKeys(peer: peer, bonded: true, secureConnections: true, authenticated: false, keySize: 16, method: .justWorks)
        keys.longTermKey = LongTermKey(key: SMPValue128(7), ediv: 0, rand: 0, keySize: 16)
        keys.peerIdentity = identity.map { IdentityKey(identityResolvingKey: SMPValue128(9), address: $0) }
        return keys
    }

    /// Keys of a pairing protected against a man in the middle (numeric comparison).
    static func authenticatedKeys(from peer: DeviceAddress) -> PairingKeys {
        var keys = keys(from: peer)
        keys.authenticated = true
        keys.method = .numericComparison
        return keys
    }

    /// A peer on a private address (resolvable or not) that distributed no identity comes
    /// back from another address: its bond could never be found, and a peer pairing over
    /// and over from fresh addresses would fill the store until it is too large to read.
    @Test func aBondThatCouldNeverBeFoundAgainIsNotSaved() throws {
        let store = try BondStore(directory: scratchDirectory(), identity: .public(Self.local))
        let saving = BondSaving(store)
        for address: UInt64 in [0x4A11_2233_4455, 0x0A11_2233_4455] {
            saving.save(Self.keys(from: DeviceAddress(BluetoothAddress(address), type: .random)))
            #expect(saving.last == .success(false))
        }
        #expect(store.bonds.isEmpty)
    }

    /// A peer on an RPA we cannot resolve pairs Just Works and names, as its identity, a
    /// device bonded with a passkey: SMP could not know whom it would replace, the save
    /// does. The same keys for an unknown identity, or with the option off, are saved.
    @Test func weakerKeysDoNotReplaceAStrongerBondOfTheIdentityGiven() throws {
        let store = try BondStore(directory: scratchDirectory(), identity: .public(Self.local))
        let victim = DeviceAddress(BluetoothAddress(0x0011_2233_4455), type: .public)
        let passkey = Self.authenticatedKeys(from: victim)
        let saving = BondSaving(store)
        saving.save(passkey)
        #expect(saving.last == .success(true))
        let attacker = DeviceAddress(BluetoothAddress(0x4A11_2233_4455), type: .random)
        saving.save(Self.keys(from: attacker, identity: victim))
        guard case let .failure(.strongerBondKept(peer, shortfall))? = saving.last else {
            Issue.record("the weaker keys were not refused: \(String(describing: saving.last))")
            return
        }
        #expect(peer == victim && shortfall.contains("unauthenticated"))
        #expect(store.bonds.count == 1 && store.bonds.first?.authenticated == true)
        #expect("\(BondStoreError.strongerBondKept(peer: peer, shortfall: shortfall))".contains("bonds remove 00:11:22:33:44:55"))
        let other = DeviceAddress(BluetoothAddress(0x0011_2233_4466), type: .public)
        saving.save(Self.keys(from: attacker, identity: other))
        #expect(saving.last == .success(true))
        // Keys with no LTK at all (legacy, no EncKey asked for): no strength to compare
        // with, but they would still replace a bond that has one.
        var keyless = Self.keys(from: attacker, identity: victim)
        keyless.longTermKey = nil
        keyless.secureConnections = false
        saving.save(keyless)
        guard case .failure(.strongerBondKept)? = saving.last else {
            Issue.record("keys without an LTK replaced the bond: \(String(describing: saving.last))")
            return
        }
        #expect(store.bond(for: victim)?.keyAsCentral != nil)
        let open = BondSaving(store, refusesWeakerRepairing: false)
        open.save(Self.keys(from: attacker, identity: victim))
        #expect(open.last == .success(true))
        #expect(store.bond(for: victim)?.authenticated == false)
    }

    /// The stronger bond was saved by another process sharing the directory (a pairing
    /// tool run beside a server): the check is made against the file, not against what
    /// this process read at its start.
    @Test func aStrongerBondAnotherProcessSavedIsNotReplaced() throws {
        let directory = scratchDirectory()
        let running = try BondStore(directory: directory, identity: .public(Self.local))
        let other = try BondStore(directory: directory, identity: .public(Self.local))
        let victim = DeviceAddress(BluetoothAddress(0x0011_2233_4455), type: .public)
        let passkey = Self.authenticatedKeys(from: victim)
        let elsewhere = BondSaving(other)
        elsewhere.save(passkey)
        #expect(elsewhere.last == .success(true))
        let saving = BondSaving(running)
        saving.save(Self.keys(from: DeviceAddress(BluetoothAddress(0x4A11_2233_4455), type: .random), identity: victim))
        guard case .failure(.strongerBondKept)? = saving.last else {
            Issue.record("the weaker keys replaced a bond another process saved: \(String(describing: saving.last))")
            return
        }
        #expect(other.bond(for: victim)?.authenticated == true)
    }

    @Test func bondsOfIdentifiedPeersAreSaved() throws {
        let store = try BondStore(directory: scratchDirectory(), identity: .public(Self.local))
        let saving = BondSaving(store)
        let identity = DeviceAddress(BluetoothAddress(0xC0FF_EE00_0001), type: .random)
        saving.save(Self.keys(from: DeviceAddress(BluetoothAddress(0x4A11_2233_4455), type: .random), identity: identity))
        #expect(saving.last == .success(true))
        let publicPeer = DeviceAddress(BluetoothAddress(0x0011_2233_4455), type: .public)
        saving.save(Self.keys(from: publicPeer))
        #expect(saving.last == .success(true))
        #expect(Set(store.bonds.map(\.peer)) == [identity, publicPeer])
    }
}
