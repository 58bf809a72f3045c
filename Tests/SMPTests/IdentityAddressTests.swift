import BluetoothCore
@testable import SMP
import Testing
import TestSupport

/// The identity a peer distributes decides where its bond is kept and how it is found
/// again (Core 5.4 Vol 3 Part H 3.6.4, 3.6.5): an identity that cannot be an address, or
/// one that contradicts the identity address the peer is connected from, is ignored with
/// its IRK, so the bond stays under the address the peer will come back from, and no peer
/// can claim another bonded device's identity.
@Suite struct IdentityAddressTests {
    static let irk = SMPValue128(5)

    /// A legacy initiator at key distribution, connected to `peer`, receiving the peer's
    /// IRK and `identity`; the keys it completed with.
    static func distributed(_ identity: DeviceAddress, from peer: DeviceAddress) -> PairingKeys? {
        var script = Script(.initiator, PairingConfiguration(secureConnections: false))
        script.machine = PairingMachine(role: .initiator, configuration: PairingConfiguration(secureConnections: false),
                                        localAddress: PairingPair.centralAddress, peerAddress: peer, random: SeededRandom(seed: 3))
        script.machine.step = .distributingKeys
        script.machine.context.response = features(keySize: 16, sc: false)
        script.machine.context.keySizeChecked = true
        script.machine.context.keys = PairingKeys(peer: peer, bonded: true, secureConnections: false, authenticated: false, keySize: 16, method: .justWorks)
        script.machine.context.expectedFromPeer = [.identityInformation, .identityAddressInformation]
        script.peer(.identityInformation(identityResolvingKey: irk))
        script.peer(.identityAddressInformation(identity))
        return script.actions.compactMap { if case let .completed(keys) = $0 { keys } else { nil } }.first
    }

    static let rpa = DeviceAddress(BluetoothAddress(0x4A11_2233_4455), type: .random)
    static let staticIdentity = DeviceAddress(BluetoothAddress(0xC0FF_EE00_0001), type: .random)
    static let publicIdentity = DeviceAddress(BluetoothAddress(0x0011_2233_4455), type: .public)

    @Test("a peer on a private address is kept under the identity it distributes")
    func identityFromAPrivateAddress() throws {
        for identity in [Self.staticIdentity, Self.publicIdentity] {
            let keys = try #require(Self.distributed(identity, from: Self.rpa))
            #expect(keys.peerIdentity == IdentityKey(identityResolvingKey: Self.irk, address: identity))
            #expect(keys.bond(createdAt: 0).peer == identity)
        }
    }

    @Test("a peer connected from its own identity address keeps it when it distributes the same one")
    func sameIdentity() throws {
        let keys = try #require(Self.distributed(Self.publicIdentity, from: Self.publicIdentity))
        #expect(keys.peerIdentity?.address == Self.publicIdentity)
        #expect(keys.bond(createdAt: 0).peer == Self.publicIdentity)
    }

    /// A peer on its public (or static) address that names another identity: the bond would
    /// be kept where the peer is never found (it reconnects from the address it used), or
    /// would replace the bond of the device it named.
    @Test("an identity other than the identity address the peer is connected from is ignored")
    func contradictingIdentity() throws {
        for (peer, claimed) in [(Self.publicIdentity, Self.staticIdentity), (Self.staticIdentity, Self.publicIdentity),
                                (Self.publicIdentity, DeviceAddress(BluetoothAddress(0x0011_2233_4456), type: .public))] {
            let keys = try #require(Self.distributed(claimed, from: peer), "the pairing still completes")
            #expect(keys.peerIdentity == nil)
            #expect(keys.bond(createdAt: 0).peer == peer)
        }
    }

    @Test("the all-zero public address is no identity")
    func zeroIdentity() throws {
        let keys = try #require(Self.distributed(DeviceAddress(BluetoothAddress(0), type: .public), from: Self.rpa))
        #expect(keys.peerIdentity == nil)
        #expect(keys.bond(createdAt: 0).peer == Self.rpa)
    }
}
