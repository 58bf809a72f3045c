import Crypto
import CryptoExtras

/// The AES-128 block cipher as the Bluetooth specification uses it: SMP's toolbox and
/// privacy build on it (Core 5.4 Vol 3 Part H 2.2.1), and so does AES-CMAC, which GATT's
/// Database Hash needs outside SMP (Vol 3 Part G 7.3).
public enum AES128 {
    /// e: AES-128 encryption of one block (Core 5.4 Vol 3 Part H 2.2.1).
    ///
    /// The specification maps the most significant octet of `key` and of `plaintextData` to
    /// the first octet of the AES input, which is exactly `UInt128.bigEndianBytes`.
    public static func e(key: UInt128, plaintextData: UInt128) -> UInt128 {
        var block = plaintextData.bigEndianBytes
        do {
            try AES.permute(&block, key: SymmetricKey(data: key.bigEndianBytes))
            return try UInt128(bigEndian: block)
        } catch {
            // Only a wrong block or key size makes either call throw, and both are 16 octets
            // by construction; reaching here means swift-crypto changed its contract.
            preconditionFailure("AES-128 of one 16-octet block failed: \(error)")
        }
    }
}
