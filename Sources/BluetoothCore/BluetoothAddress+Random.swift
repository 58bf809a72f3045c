extension BluetoothAddress {
    /// A fresh random static address (Core Vol 6 Part B 1.3.2.1): the two most significant
    /// bits are 0b11 and the other 46 bits are random, neither all zeros nor all ones.
    ///
    /// A device keeps one such address for at least a power cycle, so callers generate one
    /// and reuse it rather than calling this per advertisement.
    public static func randomStatic<Generator: RandomNumberGenerator>(using generator: inout Generator) -> BluetoothAddress {
        let randomBits: UInt64 = 0x3FFF_FFFF_FFFF
        while true {
            let bits = generator.next() & randomBits
            // All zeros or all ones in the random part are forbidden; drawing again keeps
            // the remaining values uniformly likely.
            if bits != 0 && bits != randomBits {
                return BluetoothAddress(0xC000_0000_0000 | bits)
            }
        }
    }

    /// A fresh random static address from the system's generator.
    public static func randomStatic() -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        return randomStatic(using: &generator)
    }

    /// Whether this address has the form of a random static address: top bits 0b11 and the
    /// remaining 46 bits neither all zeros nor all ones.
    public var isValidRandomStatic: Bool {
        let randomBits: UInt64 = 0x3FFF_FFFF_FFFF
        let bits = value & randomBits
        return value >> 46 == 0b11 && bits != 0 && bits != randomBits
    }
}
