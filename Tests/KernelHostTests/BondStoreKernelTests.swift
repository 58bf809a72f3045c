import BluetoothCore
import Bonding
import KernelHost
import SMP
import Testing
import TestSupport

/// The kernel's key events kept as bonds (hci-raw), and the bonds handed back as the
/// records of the kernel's Load commands.
@Suite struct BondStoreKernelTests {
    static let local = BluetoothAddress(0xF00D_0000_0001)
    static let peer = DeviceAddress(BluetoothAddress(0xC44B_4D00_0001), type: .random)
    static let key = Array(UInt8(0x10)...UInt8(0x1F))
    static let irk = Array(UInt8(0x20)...UInt8(0x2F))

    static func ltk(_ type: KernelKeys.KeyType, central: Bool = false, ediv: UInt16 = 0, rand: UInt64 = 0, value: [UInt8] = key) -> KernelKeyEvent {
        .longTermKey(KernelKeys.LongTermKey(peer: peer, type: type, central: central, keySize: 16, ediv: ediv, rand: rand, value: value))
    }

    /// As the kernel reports a Secure Connections pairing with an identity: IRK, then the
    /// LTK. One bond, the LTK in both roles, the IRK the peer's; Load gives one LTK
    /// (`central` 0, the P-256 type) and the IRK, the same bytes the events carried.
    @Test func aSecureConnectionsPairingBecomesOneBondAndLoadsBack() throws {
        let store = try BondStore(directory: scratchDirectory(), identity: .public(Self.local))
        #expect(try store.keep(.identityResolvingKey(KernelKeys.IdentityResolvingKey(peer: Self.peer, value: Self.irk), resolvablePrivateAddress: BluetoothAddress(0)), now: 100) == .kept)
        #expect(try store.keep(Self.ltk(.authenticatedP256), now: 101) == .kept)
        let bond = try #require(store.bonds.first)
        #expect(store.bonds.count == 1 && bond.peer == Self.peer && bond.createdAt == 100)
        #expect(bond.secureConnections && bond.authenticated)
        let expected = LongTermKey(key: try SMPValue128(littleEndian: Self.key), ediv: 0, rand: 0, keySize: 16)
        #expect(bond.peerKeys.longTermKey == expected && bond.localKeys.longTermKey == expected)
        #expect(bond.peerKeys.identityResolvingKey == (try SMPValue128(littleEndian: Self.irk)))

        let keys = store.kernelKeys()
        #expect(keys.longTermKeys == [KernelKeys.LongTermKey(peer: Self.peer, type: .authenticatedP256, central: false, keySize: 16, ediv: 0, rand: 0, value: Self.key)])
        #expect(keys.identityResolvingKeys == [KernelKeys.IdentityResolvingKey(peer: Self.peer, value: Self.irk)])
        #expect(keys.connectionParameters.isEmpty)
    }

    /// Legacy pairing: the peer's LTK (`central` 1, with its EDIV and Rand) is the one we
    /// present, ours (`central` 0) the one we answer with; both load back as they came.
    /// Re-pairing with Secure Connections drops both.
    @Test func legacyKeysKeepTheirRoles() throws {
        let store = try BondStore(directory: scratchDirectory(), identity: .public(Self.local))
        let ours = Array(UInt8(0x30)...UInt8(0x3F))
        try store.keep(Self.ltk(.unauthenticatedLegacy, central: true, ediv: 0x1234, rand: 0x55), now: 1)
        try store.keep(Self.ltk(.unauthenticatedLegacy, central: false, ediv: 0x9876, rand: 0x66, value: ours), now: 2)
        let bond = try #require(store.bonds.first)
        #expect(!bond.secureConnections && !bond.authenticated)
        #expect(bond.peerKeys.longTermKey?.ediv == 0x1234 && bond.localKeys.longTermKey?.ediv == 0x9876)
        let loaded = store.kernelKeys().longTermKeys
        #expect(loaded.count == 2)
        #expect(loaded.contains(KernelKeys.LongTermKey(peer: Self.peer, type: .unauthenticatedLegacy, central: true, keySize: 16, ediv: 0x1234, rand: 0x55, value: Self.key)))
        #expect(loaded.contains(KernelKeys.LongTermKey(peer: Self.peer, type: .unauthenticatedLegacy, central: false, keySize: 16, ediv: 0x9876, rand: 0x66, value: ours)))

        try store.keep(Self.ltk(.unauthenticatedP256), now: 3)
        #expect(store.kernelKeys().longTermKeys == [KernelKeys.LongTermKey(peer: Self.peer, type: .unauthenticatedP256, central: false, keySize: 16, ediv: 0, rand: 0, value: Self.key)])
    }

    /// A debug key is not kept (anyone can derive it, the kernel will not load it); a key
    /// value that is not 16 octets neither; connection parameters need a bond, and then
    /// load back; a CSRK goes to its side.
    @Test func refusedKeysAndAttachedParameters() throws {
        let store = try BondStore(directory: scratchDirectory(), identity: .public(Self.local))
        let parameters = KernelKeys.ConnectionParameters(peer: Self.peer, minimumInterval: 24, maximumInterval: 40, latency: 0, supervisionTimeout: 42)
        #expect(try store.keep(.connectionParameters(parameters), now: 1) == .noBond)
        #expect(try store.keep(Self.ltk(.debugP256), now: 1) == .debugKeyRefused)
        #expect(try store.keep(Self.ltk(.authenticatedP256, value: [1, 2, 3]), now: 1) == .invalidKey)
        #expect(store.bonds.isEmpty)

        try store.keep(Self.ltk(.unauthenticatedP256), now: 1)
        #expect(try store.keep(.connectionParameters(parameters), now: 2) == .kept)
        #expect(try store.keep(.signatureKey(KernelKeys.SignatureKey(peer: Self.peer, type: 1, value: Self.irk)), now: 2) == .kept)
        #expect(try store.keep(.signatureKey(KernelKeys.SignatureKey(peer: Self.peer, type: 0, value: Self.key)), now: 2) == .kept)
        #expect(store.kernelKeys().connectionParameters == [parameters])
        let bond = try #require(store.bonds.first)
        #expect(bond.peerKeys.signatureKey?.key == (try SMPValue128(littleEndian: Self.irk)))
        #expect(bond.localKeys.signatureKey?.key == (try SMPValue128(littleEndian: Self.key)))
        // Removing the bond removes its parameters with it.
        #expect(try store.remove(Self.peer))
        #expect(store.kernelKeys().connectionParameters.isEmpty && store.kernelKeys().longTermKeys.isEmpty)
    }
}
