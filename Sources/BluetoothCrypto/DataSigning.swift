/// The data signing algorithm (Core 5.4 Vol 3 Part H 2.4.5): what authenticates a Signed
/// Write Command on a link that is not encrypted (Vol 3 Part C 10.4, Part F 3.4.5.4).
///
/// The signer appends its SignCounter (32 bits, little-endian) to the data, takes
/// AES-CMAC of that under the CSRK, and keeps the 64 most significant bits of the tag. The
/// 12-octet Authentication Signature that ends the PDU is the SignCounter followed by that
/// MAC, both least significant octet first, as everything on the air is.
///
/// Octet order: the data and the key arrive as protocols carry them (least significant
/// octet first), while CMAC takes the specification's numbers most significant octet
/// first, so the message is authenticated reversed: the last octet on the air is the most
/// significant.
public enum DataSigning {
    /// Octets in an Authentication Signature: SignCounter (4) and MAC (8).
    public static let signatureLength = 12

    /// The Authentication Signature of `data` (as sent, e.g. opcode, handle and value)
    /// under `key` with `counter`.
    public static func signature(key: UInt128, data: some Collection<UInt8>, counter: UInt32) -> [UInt8] {
        var message = Array(data)
        for shift in stride(from: 0, to: 32, by: 8) { message.append(UInt8(truncatingIfNeeded: counter >> shift)) }
        let tag = AESCMAC.mac(key: key, message: message.reversed())
        var signature = message.suffix(4)
        // The tag's 64 most significant bits, least significant octet first.
        for index in 0..<8 { signature.append(UInt8(truncatingIfNeeded: tag >> (64 + 8 * index))) }
        return Array(signature)
    }

    /// The SignCounter an Authentication Signature carries, or nil when it is not 12 octets.
    public static func counter(of signature: some Collection<UInt8>) -> UInt32? {
        guard signature.count == signatureLength else { return nil }
        return signature.prefix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// True when `signature` is the one `key` gives `data` with the counter it carries.
    /// Every octet is compared whatever the first difference, so the time taken does not
    /// tell a forger how much of its guess was right.
    public static func verify(_ signature: some Collection<UInt8>, key: UInt128, data: some Collection<UInt8>) -> Bool {
        guard let counter = counter(of: signature) else { return false }
        let expected = self.signature(key: key, data: data, counter: counter)
        var difference: UInt8 = 0
        for (a, b) in zip(expected, signature) { difference |= a ^ b }
        return difference == 0
    }
}
