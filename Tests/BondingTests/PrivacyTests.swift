import BluetoothCore
import Bonding
import HCI
import SMP
import Testing
import TestSupport

/// An instant the test moves by hand: rotation without waiting.
struct TestInstant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> TestInstant { TestInstant(offset: offset + duration) }
    func duration(to other: TestInstant) -> Duration { other.offset - offset }
    static func < (lhs: TestInstant, rhs: TestInstant) -> Bool { lhs.offset < rhs.offset }
}

@Suite struct BondResolverTests {
    typealias F = BondFixtures

    @Test func anRPAMadeWithAStoredIRKResolvesToItsIdentity() {
        let resolver = BondResolver(bonds: [F.bond(1), F.bond(2, irk: F.sampleIRK), F.bond(3)])
        // The specification's sample: ah(IRK, 0x708194) = 0x0DFBAA.
        #expect(resolver.identity(for: DeviceAddress(F.sampleRPA, type: .random)) == F.bond(2).peer)
        let report = Advertisement(address: DeviceAddress(F.sampleRPA, type: .random), eventType: [.connectable, .legacy])
        #expect(resolver.bond(for: report) == F.bond(2, irk: F.sampleIRK))
    }

    @Test func anRPAOfAnotherIRKResolvesToNobody() {
        let resolver = BondResolver(bonds: [F.bond(1), F.bond(2), F.bond(3)])
        #expect(resolver.bond(for: DeviceAddress(F.sampleRPA, type: .random)) == nil)
        var random = SeededRandom(seed: 0x0071_4E55)
        for _ in 0..<100 {
            let stranger = BluetoothAddress.resolvablePrivate(irk: .random(using: &random), using: &random)
            #expect(resolver.bond(for: DeviceAddress(stranger, type: .random)) == nil)
        }
        // One bit off the sample hash.
        #expect(BondResolver(bonds: [F.bond(2, irk: F.sampleIRK)]).bond(for: DeviceAddress(BluetoothAddress("70:81:94:0D:FB:AB")!, type: .random)) == nil)
    }

    @Test func identitiesMatchByAddressAndType() {
        let publicBond = Bond(peer: DeviceAddress(BluetoothAddress("00:11:22:33:44:55")!, type: .public), authenticated: false, secureConnections: true, createdAt: 0)
        let resolver = BondResolver(bonds: [F.bond(1), publicBond])
        #expect(resolver.identity(for: F.bond(1).peer) == F.bond(1).peer)
        #expect(resolver.identity(for: publicBond.peer) == publicBond.peer)
        // The controller already resolved: identity address types.
        #expect(resolver.identity(for: DeviceAddress(F.bond(1).peer.address, type: .randomIdentity)) == F.bond(1).peer)
        #expect(resolver.identity(for: DeviceAddress(publicBond.peer.address, type: .publicIdentity)) == publicBond.peer)
        // Same bits, other type: another device.
        #expect(resolver.identity(for: DeviceAddress(publicBond.peer.address, type: .random)) == nil)
        #expect(resolver.identity(for: DeviceAddress(F.bond(1).peer.address, type: .public)) == nil)
        // Non-resolvable private addresses belong to nobody, even if an IRK "matched".
        #expect(resolver.identity(for: DeviceAddress(BluetoothAddress("30:81:94:0D:FB:AA")!, type: .random)) == nil)
    }
}

@Suite struct PrivateAddressRotationTests {
    typealias F = BondFixtures

    @Test func theAddressChangesWhenTheIntervalRunsOut() {
        var random = SeededRandom(seed: 0x4071_0001)
        let start = TestInstant(offset: .zero)
        var rotation = PrivateAddressRotation(identityResolvingKey: F.sampleIRK, now: start, using: &random)
        #expect(rotation.interval == .seconds(900))
        let first = rotation.address
        #expect(first.resolves(with: F.sampleIRK))
        #expect(DeviceAddress(first, type: .random).kind == .resolvablePrivate)
        #expect(rotation.rotateIfDue(at: start.advanced(by: .seconds(899)), using: &random) == nil)
        #expect(rotation.address == first)

        var seen: Set<BluetoothAddress> = [first]
        var now = start.advanced(by: .seconds(900))
        for generation in 2...50 {
            let next = rotation.rotateIfDue(at: now, using: &random)
            #expect(next != nil && next == rotation.address)
            #expect(rotation.address.resolves(with: F.sampleIRK))
            #expect(rotation.generation == generation)
            seen.insert(rotation.address)
            #expect(rotation.expiry == now.advanced(by: .seconds(900)))
            now = now.advanced(by: .seconds(900))
        }
        #expect(seen.count == 50)
    }

    @Test func theIntervalIsConfigurableAndALongGapRotatesOnce() {
        var random = SeededRandom(seed: 0x4071_0002)
        var rotation = PrivateAddressRotation(identityResolvingKey: F.sampleIRK, interval: .seconds(60), now: TestInstant(offset: .zero), using: &random)
        let late = TestInstant(offset: .seconds(3600 * 5))
        #expect(rotation.rotateIfDue(at: late, using: &random) != nil)
        #expect(rotation.generation == 2)
        #expect(!rotation.isDue(at: late.advanced(by: .seconds(59))))
        #expect(rotation.isDue(at: late.advanced(by: .seconds(60))))
    }

    @Test func aRefusedChangeKeepsTheOldAddressAndRetries() {
        var random = SeededRandom(seed: 0x4071_0003)
        var rotation = PrivateAddressRotation(identityResolvingKey: F.sampleIRK, interval: .seconds(60), now: TestInstant(offset: .zero), using: &random)
        let old = rotation.address
        let now = TestInstant(offset: .seconds(60))
        _ = rotation.rotateIfDue(at: now, using: &random)
        rotation.postpone(old, until: now.advanced(by: .seconds(1)))
        #expect(rotation.address == old)
        #expect(rotation.isDue(at: now.advanced(by: .seconds(1))))
        #expect(rotation.rotateIfDue(at: now.advanced(by: .seconds(1)), using: &random) != old)
    }

    @Test func ourIdentityMakesRPAsThatPeersResolve() throws {
        var random = SeededRandom(seed: 0x4071_0004)
        let identity = try LocalIdentity.generate(address: nil, using: &random)
        #expect(identity.address.kind == .randomStatic)
        let rpa = identity.resolvablePrivateAddress(using: &random)
        // A peer holding our IRK (as the bond's localKeys record it) resolves it.
        let asPeerSeesUs = Bond(peer: identity.address, peerKeys: DistributedKeys(identityResolvingKey: identity.identityResolvingKey),
                                authenticated: true, secureConnections: true, createdAt: 0)
        #expect(BondResolver(bonds: [asPeerSeesUs]).identity(for: DeviceAddress(rpa, type: .random)) == identity.address)
        #expect(throws: BondStoreError.self) { try LocalIdentity(address: DeviceAddress(rpa, type: .random), identityResolvingKey: .zero) }
    }
}
