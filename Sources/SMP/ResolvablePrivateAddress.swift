import BluetoothCore
import BluetoothCrypto

extension CryptoToolbox {
    /// ah: the random address hash (Core Vol 3 Part H 2.2.2), the low 24 bits of
    /// e(k, padding || r).
    ///
    /// - Parameters:
    ///   - k: the identity resolving key (IRK).
    ///   - r: prand, the 24 most significant bits of a resolvable private address; bits above
    ///     the low 24 are ignored.
    /// - Returns: the 24-bit hash in the low bits.
    public static func ah(k: SMPValue128, r: UInt32) -> UInt32 {
        let rPrime = UInt128(r & 0xFF_FFFF)
        return UInt32(truncatingIfNeeded: AES128.e(key: k.value, plaintextData: rPrime)) & 0xFF_FFFF
    }
}

extension BluetoothAddress {
    /// The prand bits that may vary: all but the top two, which are 0b01 in an RPA.
    private static let prandRandomBits: UInt32 = 0x3F_FFFF

    /// A fresh resolvable private address for `irk` (Core Vol 6 Part B 1.3.2.2): prand in
    /// the top 24 bits (top two bits 0b01, the rest random and neither all zeros nor all
    /// ones), ah(irk, prand) in the low 24 bits.
    public static func resolvablePrivate<Generator: RandomNumberGenerator>(
        irk: SMPValue128, using generator: inout Generator
    ) -> BluetoothAddress {
        while true {
            let bits = UInt32(truncatingIfNeeded: generator.next()) & prandRandomBits
            // Drawing again instead of patching a forbidden value keeps the others uniform.
            guard bits != 0 && bits != prandRandomBits else { continue }
            let prand = 0x40_0000 | bits
            let hash = CryptoToolbox.ah(k: irk, r: prand)
            return BluetoothAddress(UInt64(prand) << 24 | UInt64(hash))
        }
    }

    /// A fresh resolvable private address for `irk` from the system's generator.
    public static func resolvablePrivate(irk: SMPValue128) -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        return resolvablePrivate(irk: irk, using: &generator)
    }

    /// Whether this address is a resolvable private address generated with `irk`
    /// (Core Vol 6 Part B 1.3.2.3): it has the RPA form and its hash equals ah(irk, prand).
    /// The caller knows the address is random; a public address that happens to carry the
    /// same bits is not an RPA.
    public func resolves(with irk: SMPValue128) -> Bool {
        let prand = UInt32(truncatingIfNeeded: value >> 24)
        guard prand >> 22 == 0b01 else { return false }
        let hash = UInt32(truncatingIfNeeded: value) & 0xFF_FFFF
        return CryptoToolbox.ah(k: irk, r: prand) == hash
    }
}
