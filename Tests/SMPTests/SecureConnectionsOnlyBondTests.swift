import BluetoothCore
import HCI
import HCITransport
@testable import SMP
import Testing
import TestSupport

/// `secureConnectionsOnly` refuses legacy pairing, and so the key a legacy pairing made:
/// a bond stored before the policy (or by a run without it) must not encrypt the link.
@Suite struct SecureConnectionsOnlyBondTests {
    static let legacyKey = LongTermKey(key: SMPValue128(7), ediv: 0x1234, rand: 0x0102_0304_0506_0708, keySize: 16)
    static let secureKey = LongTermKey(key: SMPValue128(9), ediv: 0, rand: 0, keySize: 16)

    /// What the peripheral answers the central's LTK request for `key` with: the reply's
    /// key, or nil for a negative reply.
    func answer(secureConnections: Bool, policy: PairingConfiguration) async throws -> [UInt8]? {
        let key = secureConnections ? Self.secureKey : Self.legacyKey
        let link = try await SMPLink.make(role: .peripheral)
        let peer = link.connection.peer
        let manager = try link.manager(policy, storedBond: { address in
            address == peer ? Bond(peer: peer, peerKeys: DistributedKeys(), localKeys: DistributedKeys(longTermKey: key),
                                   authenticated: false, secureConnections: secureConnections, createdAt: 0) : nil
        })
        defer { manager.close() }
        await link.harness.inject(.le(.longTermKeyRequest(LELongTermKeyRequest(
            connectionHandle: SMPLink.handle, randomNumber: key.rand, encryptedDiversifier: key.ediv))))
        while true {
            let packet = try await link.harness.log.next("the LTK request's answer", timeout: .seconds(10))
            guard packet.type == .command, packet.bytes.count >= 2 else { continue }
            switch (packet.bytes[0], packet.bytes[1]) {
            case (0x1A, 0x20): return Array(packet.bytes.dropFirst(5))
            case (0x1B, 0x20): return nil
            default: continue
            }
        }
    }

    @Test func aLegacyBondsKeyIsRefusedAndASecureOnesGiven() async throws {
        let only = PairingConfiguration(secureConnectionsOnly: true)
        #expect(try await answer(secureConnections: false, policy: only) == nil)
        #expect(try await answer(secureConnections: true, policy: only) == Self.secureKey.hciBytes)
        #expect(try await answer(secureConnections: false, policy: PairingConfiguration()) == Self.legacyKey.hciBytes)
    }
}
