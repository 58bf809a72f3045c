import BluetoothCore
import SMP

/// Sample data of Core Vol 3 Part H Appendix D and RFC 4493, copied from
/// ../shared/notes/vectors.md and written most significant octet first as printed there.
enum SampleData {
    static func v128(_ hex: String) -> SMPValue128 {
        guard let value = SMPValue128(hex: hex) else { fatalError("bad 128-bit sample \(hex)") }
        return value
    }

    static func v256(_ hex: String) -> SMPValue256 {
        guard let value = SMPValue256(hex: hex) else { fatalError("bad 256-bit sample \(hex)") }
        return value
    }

    static func bytes(_ hex: String) -> [UInt8] {
        guard let bytes = Hex.bytes(hex) else { fatalError("bad hex sample \(hex)") }
        return bytes
    }

    static func address(_ text: String, _ type: AddressType) -> DeviceAddress {
        guard let address = BluetoothAddress(text) else { fatalError("bad address sample \(text)") }
        return DeviceAddress(address, type: type)
    }

    // P-256 (private key A is the SMP debug key).
    static let privateKeyA = v256("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd")
    static let publicKeyA = P256PublicKey(
        x: v256("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"),
        y: v256("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b")
    )
    static let privateKeyB = v256("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let publicKeyB = P256PublicKey(
        x: v256("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190"),
        y: v256("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
    )
    static let dhKey = v256("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")

    // LE Secure Connections.
    static let f4U = publicKeyA.x
    static let f4V = v256("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let f4X = v128("d5cb8454 d177733e ffffb2ec 712baeab")
    static let n1 = f4X
    static let n2 = v128("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf")
    static let a1 = address("56:12:37:37:BF:CE", .public)
    static let a2 = address("A7:13:70:2D:CF:C1", .public)
    static let macKey = v128("2965f176 a1084a02 fd3f6a20 ce636e20")
    static let longTermKey = v128("69867911 69d7cd23 980522b5 94750a38")
}
