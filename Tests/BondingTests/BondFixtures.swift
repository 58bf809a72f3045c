import BluetoothCore
import Bonding
import Foundation
import SMP
import TestSupport

/// Bonds, directories and file helpers the bonding tests share.
enum BondFixtures {
    /// The specification's ah sample IRK (Core Vol 3 Part H D.7, ../shared/notes/vectors.md).
    static let sampleIRK = SMPValue128(hex: "ec0234a3 57c8ad05 341010a6 0a397d9b")!
    /// The sample's prand 0x708194 with its hash 0x0DFBAA: an RPA of `sampleIRK`.
    static let sampleRPA = BluetoothAddress("70:81:94:0D:FB:AA")!
    static let localPublic = BluetoothAddress("F0:0D:00:00:00:01")!

    /// A fresh empty directory under the system's temporary directory.
    static func directory(_ name: String = #function) -> String { scratchDirectory(name) }

    /// A complete bond with every key, numbered so that each `index` differs.
    static func bond(_ index: UInt64, irk: SMPValue128? = nil, secureConnections: Bool = true) -> Bond {
        var random = SeededRandom(seed: 0xB0_4D00 + index)
        let peer = DeviceAddress(BluetoothAddress(0xC4_4B4D_0000_00 + index), type: .random)
        return Bond(
            peer: peer,
            peerKeys: DistributedKeys(
                longTermKey: LongTermKey(key: .random(using: &random), ediv: UInt16(truncatingIfNeeded: index * 77), rand: random.next(), keySize: 16),
                identityResolvingKey: irk ?? .random(using: &random),
                signatureKey: SignatureKey(key: .random(using: &random), signCounter: UInt32(index))),
            localKeys: DistributedKeys(
                longTermKey: LongTermKey(key: .random(using: &random), ediv: 0xFFFF, rand: UInt64.max, keySize: 7),
                identityResolvingKey: nil,
                signatureKey: nil),
            authenticated: index % 2 == 0,
            secureConnections: secureConnections,
            createdAt: 1_763_788_800 + Int64(index))
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        stat(path, &status)
        return status.st_mode & 0o777
    }
}
