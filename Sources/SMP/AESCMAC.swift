import Crypto
import CryptoExtras

extension CryptoToolbox {
    /// AES-CMAC with a 128-bit key (RFC 4493), the MAC under f4, f5, f6, g2, h6 and h7
    /// (Core Vol 3 Part H 2.2.5).
    ///
    /// `message` is in the order it is authenticated: the specification's functions build it
    /// most significant octet first, so the first octet here is the most significant octet of
    /// the specification's `m`.
    public static func aesCMAC(key: SMPValue128, message: [UInt8]) -> SMPValue128 {
        do {
            var mac = try AES.CMAC(key: SymmetricKey(data: key.bigEndianBytes))
            message.withUnsafeBytes { mac.update(bufferPointer: $0) }
            let tag = mac.finalize().withUnsafeBytes { Array($0) }
            return try SMPValue128(bigEndian: tag)
        } catch {
            // AES.CMAC only throws for a key or output size other than AES's; ours are fixed
            // at 16 octets, so this is a broken dependency, not bad input.
            preconditionFailure("AES-CMAC with a 16-octet key failed: \(error)")
        }
    }
}
