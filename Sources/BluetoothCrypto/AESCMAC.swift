import Crypto
import CryptoExtras

/// AES-CMAC with a 128-bit key (RFC 4493; Core 5.4 Vol 3 Part H 2.2.5): the MAC under SMP's
/// f4, f5, f6, g2, h6 and h7 and under GATT's Database Hash (Vol 3 Part G 7.3).
public enum AESCMAC {
    /// The 128-bit tag of `message` under `key`.
    ///
    /// `message` is in the order it is authenticated: the specification's functions build it
    /// most significant octet first, so the first octet here is the most significant octet of
    /// the specification's `m`. The tag's most significant octet is the first octet RFC 4493
    /// outputs.
    public static func mac(key: UInt128, message: some Collection<UInt8>) -> UInt128 {
        do {
            var mac = try AES.CMAC(key: SymmetricKey(data: key.bigEndianBytes))
            Array(message).withUnsafeBytes { mac.update(bufferPointer: $0) }
            let tag = mac.finalize().withUnsafeBytes { Array($0) }
            return try UInt128(bigEndian: tag)
        } catch {
            // AES.CMAC only throws for a key or output size other than AES's; ours are fixed
            // at 16 octets, so this is a broken dependency, not bad input.
            preconditionFailure("AES-CMAC with a 16-octet key failed: \(error)")
        }
    }
}
