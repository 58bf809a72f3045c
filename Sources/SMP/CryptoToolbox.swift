/// The SMP cryptographic toolbox (Core Vol 3 Part H 2.2): the functions both pairing
/// methods, key distribution and privacy are built from, over the AES-128 block function e
/// and AES-CMAC of `BluetoothCrypto` (2.2.1, 2.2.5), which GATT shares.
///
/// Byte order: every input and output is a number (``SMPValue128``, ``SMPValue256``,
/// `UInt32`, ``BluetoothAddress``), never a bare byte array, and the functions concatenate
/// them most significant octet first exactly as the specification writes `A || B`. Convert
/// to and from the little-endian order of SMP PDUs with `littleEndianBytes` and
/// `init(littleEndian:)` at the edge, once.
public enum CryptoToolbox {}
