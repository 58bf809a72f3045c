import BluetoothCore
import BluetoothCrypto

/// The 24-bit IOcap input of f6 (Core Vol 3 Part H 2.2.8): the three fields of the device's
/// own Pairing Request or Response, AuthReq most significant.
public struct IOCap: Hashable, Sendable {
    public var authenticationRequirements: UInt8
    public var oobDataFlag: UInt8
    public var ioCapability: UInt8

    public init(authenticationRequirements: UInt8, oobDataFlag: UInt8, ioCapability: UInt8) {
        self.authenticationRequirements = authenticationRequirements
        self.oobDataFlag = oobDataFlag
        self.ioCapability = ioCapability
    }

    var bigEndianBytes: [UInt8] { [authenticationRequirements, oobDataFlag, ioCapability] }
}

extension CryptoToolbox {
    /// f4: the LE Secure Connections confirm value (Core Vol 3 Part H 2.2.6),
    /// AES-CMAC_X(U || V || Z).
    ///
    /// - Parameters:
    ///   - u: the X coordinate of one public key (PKax or PKbx).
    ///   - v: the X coordinate of the other.
    ///   - x: the random number (Na or Nb).
    ///   - z: 0 for Just Works and Numeric Comparison; for Passkey Entry, 0x80 | the bit of
    ///     the passkey this round commits to.
    public static func f4(u: SMPValue256, v: SMPValue256, x: SMPValue128, z: UInt8) -> SMPValue128 {
        SMPValue128(AESCMAC.mac(key: x.value, message: u.bigEndianBytes + v.bigEndianBytes + [z]))
    }

    /// f5's two outputs: the key that authenticates the DHKey checks, and the LTK.
    public struct F5Keys: Hashable, Sendable {
        public var macKey: SMPValue128
        public var longTermKey: SMPValue128
    }

    /// SALT of f5 (Core Vol 3 Part H 2.2.7).
    static let f5Salt = SMPValue128(0x6C88_8391_AAF5_A538_6037_0BDB_5A60_83BE)
    /// keyID of f5: "btle" in ASCII.
    static let f5KeyID: UInt32 = 0x6274_6C65

    /// f5: the LE Secure Connections key generation function (Core Vol 3 Part H 2.2.7).
    ///
    /// - Parameters:
    ///   - w: the DHKey.
    ///   - n1, n2: the initiator's and responder's random numbers (Na, Nb).
    ///   - a1, a2: the initiator's and responder's device addresses and types, as used when
    ///     the connection was set up.
    public static func f5(w: SMPValue256, n1: SMPValue128, n2: SMPValue128, a1: DeviceAddress, a2: DeviceAddress) -> F5Keys {
        let t = SMPValue128(AESCMAC.mac(key: f5Salt.value, message: w.bigEndianBytes))
        func round(_ counter: UInt8) -> SMPValue128 {
            // Counter || keyID || N1 || N2 || A1 || A2 || Length, Length = 256 bits of output.
            let message = [counter] + bigEndian(f5KeyID) + n1.bigEndianBytes + n2.bigEndianBytes
                + addressBytes(a1) + addressBytes(a2) + [0x01, 0x00]
            return SMPValue128(AESCMAC.mac(key: t.value, message: message))
        }
        return F5Keys(macKey: round(0), longTermKey: round(1))
    }

    /// f6: the LE Secure Connections check value Ea/Eb (Core Vol 3 Part H 2.2.8),
    /// AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2).
    ///
    /// - Parameters:
    ///   - w: the MacKey from f5.
    ///   - r: the passkey (Passkey Entry), the peer's OOB random (OOB), or zero.
    public static func f6(
        w: SMPValue128, n1: SMPValue128, n2: SMPValue128, r: SMPValue128,
        ioCap: IOCap, a1: DeviceAddress, a2: DeviceAddress
    ) -> SMPValue128 {
        let message = n1.bigEndianBytes + n2.bigEndianBytes + r.bigEndianBytes + ioCap.bigEndianBytes
            + addressBytes(a1) + addressBytes(a2)
        return SMPValue128(AESCMAC.mac(key: w.value, message: message))
    }

    /// g2: the LE Secure Connections numeric comparison value (Core Vol 3 Part H 2.2.9), the
    /// low 32 bits of AES-CMAC_X(U || V || Y). The user sees ``numericComparisonValue(_:)``.
    ///
    /// - Parameters: u, v: PKax and PKbx; x, y: Na and Nb.
    public static func g2(u: SMPValue256, v: SMPValue256, x: SMPValue128, y: SMPValue128) -> UInt32 {
        let mac = AESCMAC.mac(key: x.value, message: u.bigEndianBytes + v.bigEndianBytes + y.bigEndianBytes)
        return UInt32(truncatingIfNeeded: mac)
    }

    /// The six decimal digits both users compare: g2's value mod 10^6 (Core Vol 3 Part H
    /// 2.3.5.6.2). Display it zero-padded to six digits.
    public static func numericComparisonValue(_ g2Value: UInt32) -> UInt32 {
        g2Value % 1_000_000
    }

    /// h6: the link key conversion function (Core Vol 3 Part H 2.2.10), AES-CMAC_W(keyID),
    /// used to derive keys between LE and BR/EDR ("tmp1", "lebr", "tmp2", "brle").
    public static func h6(w: SMPValue128, keyID: UInt32) -> SMPValue128 {
        SMPValue128(AESCMAC.mac(key: w.value, message: bigEndian(keyID)))
    }

    /// h7: the link key conversion function with a salt (Core Vol 3 Part H 2.2.11),
    /// AES-CMAC_SALT(W), used instead of h6 when both sides set the CT2 bit.
    public static func h7(salt: SMPValue128, w: SMPValue128) -> SMPValue128 {
        SMPValue128(AESCMAC.mac(key: salt.value, message: w.bigEndianBytes))
    }

    /// A1/A2 of f5 and f6: the address type octet (0 public, 1 random) above the address.
    private static func addressBytes(_ device: DeviceAddress) -> [UInt8] {
        [addressTypeBit(device)] + device.address.littleEndianBytes.reversed()
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
