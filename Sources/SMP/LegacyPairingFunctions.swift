import BluetoothCore
import BluetoothCrypto

extension CryptoToolbox {
    /// c1: the LE legacy pairing confirm value (Core Vol 3 Part H 2.2.3).
    ///
    /// - Parameters:
    ///   - k: the temporary key TK.
    ///   - r: the random number (Mrand or Srand).
    ///   - pairingRequest: the Pairing Request command, all 7 octets exactly as sent on the
    ///     air (opcode first). The specification's `preq` is these octets read as a
    ///     little-endian number, so the PDU's bytes go in unchanged.
    ///   - pairingResponse: the Pairing Response command, likewise.
    ///   - initiator: the initiating device's address and type (`ia`, `iat`).
    ///   - responder: the responding device's address and type (`ra`, `rat`).
    /// - Throws: `DecodeError.lengthMismatch` when a command is not 7 octets long.
    public static func c1(
        k: SMPValue128,
        r: SMPValue128,
        pairingRequest: some Collection<UInt8>,
        pairingResponse: some Collection<UInt8>,
        initiator: DeviceAddress,
        responder: DeviceAddress
    ) throws(DecodeError) -> SMPValue128 {
        let preq = try pairingCommandValue(pairingRequest)
        let pres = try pairingCommandValue(pairingResponse)
        // p1 = pres || preq || rat' || iat', where the address types are one octet each.
        let p1 = pres << 72 | preq << 16 | UInt128(addressTypeBit(responder)) << 8 | UInt128(addressTypeBit(initiator))
        // p2 = padding (32 zero bits) || ia || ra.
        let p2 = UInt128(initiator.address.value) << 48 | UInt128(responder.address.value)
        return SMPValue128(AES128.e(key: k.value, plaintextData: AES128.e(key: k.value, plaintextData: r.value ^ p1) ^ p2))
    }

    /// s1: the LE legacy pairing short-term key STK (Core Vol 3 Part H 2.2.4): the low 64
    /// bits of `r1` (Srand) above the low 64 bits of `r2` (Mrand), encrypted with TK.
    public static func s1(k: SMPValue128, r1: SMPValue128, r2: SMPValue128) -> SMPValue128 {
        let lowHalf: UInt128 = (1 << 64) - 1
        let rPrime = (r1.value & lowHalf) << 64 | (r2.value & lowHalf)
        return SMPValue128(AES128.e(key: k.value, plaintextData: rPrime))
    }

    private static func pairingCommandValue(_ bytes: some Collection<UInt8>) throws(DecodeError) -> UInt128 {
        guard bytes.count == 7 else { throw .lengthMismatch(declared: 7, actual: bytes.count) }
        var value: UInt128 = 0
        for byte in bytes.reversed() { value = value << 8 | UInt128(byte) }
        return value
    }
}

/// The one-bit address type SMP's functions take (0 public, 1 random). Identity types the
/// controller reports after resolving an RPA map to their public/random family.
func addressTypeBit(_ device: DeviceAddress) -> UInt8 {
    device.type.isRandom ? 1 : 0
}
