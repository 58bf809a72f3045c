import Crypto
import CryptoExtras

/// The SMP cryptographic toolbox (Core Vol 3 Part H 2.2): the functions both pairing
/// methods, key distribution and privacy are built from.
///
/// Byte order: every input and output is a number (``SMPValue128``, ``SMPValue256``,
/// `UInt32`, ``BluetoothAddress``), never a bare byte array, and the functions concatenate
/// them most significant octet first exactly as the specification writes `A || B`. Convert
/// to and from the little-endian order of SMP PDUs with `littleEndianBytes` and
/// `init(littleEndian:)` at the edge, once.
public enum CryptoToolbox {
    /// e: AES-128 encryption of one block (Core Vol 3 Part H 2.2.1).
    ///
    /// The specification maps the most significant octet of `key` and of `plaintextData` to
    /// the first octet of the AES input, which is exactly ``SMPValue128/bigEndianBytes``.
    public static func e(key: SMPValue128, plaintextData: SMPValue128) -> SMPValue128 {
        var block = plaintextData.bigEndianBytes
        do {
            try AES.permute(&block, key: SymmetricKey(data: key.bigEndianBytes))
            return try SMPValue128(bigEndian: block)
        } catch {
            // Only a wrong block or key size makes either call throw, and both are 16 octets
            // by construction; reaching here means swift-crypto changed its contract.
            preconditionFailure("AES-128 of one 16-octet block failed: \(error)")
        }
    }
}
