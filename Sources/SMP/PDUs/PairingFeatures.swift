import BluetoothCore

/// The six parameters of Pairing Request and Pairing Response (Core Vol 3 Part H 3.5.1,
/// 3.5.2): what each device can do and wants. The values are kept as received; checking
/// them (reserved IO capability, key size outside 7 ... 16) is pairing's job, so a peer's
/// bad value is answered with the right Pairing Failed reason rather than dropped.
public struct PairingFeatures: Hashable, Sendable, CustomStringConvertible {
    public var ioCapability: IOCapability
    /// OOB data flag: 0x01 when this device has the peer's OOB data.
    public var oobDataPresent: Bool
    public var authenticationRequirements: AuthenticationRequirements
    /// Maximum Encryption Key Size in octets (7 ... 16).
    public var maximumEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: KeyDistribution
    public var responderKeyDistribution: KeyDistribution

    public init(
        ioCapability: IOCapability, oobDataPresent: Bool = false,
        authenticationRequirements: AuthenticationRequirements,
        maximumEncryptionKeySize: UInt8 = 16,
        initiatorKeyDistribution: KeyDistribution, responderKeyDistribution: KeyDistribution
    ) {
        self.ioCapability = ioCapability
        self.oobDataPresent = oobDataPresent
        self.authenticationRequirements = authenticationRequirements
        self.maximumEncryptionKeySize = maximumEncryptionKeySize
        self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }

    /// An OOB data flag other than 0x00 or 0x01 is reserved: refused here, because no
    /// reading of it is safe.
    init(decoding reader: inout ByteReader) throws(DecodeError) {
        ioCapability = IOCapability(rawValue: try reader.readUInt8())
        let oob = try reader.readUInt8()
        guard oob <= 1 else { throw .invalidValue(field: "OOB data flag", value: Int(oob)) }
        oobDataPresent = oob == 1
        authenticationRequirements = AuthenticationRequirements(rawValue: try reader.readUInt8())
        maximumEncryptionKeySize = try reader.readUInt8()
        initiatorKeyDistribution = KeyDistribution(rawValue: try reader.readUInt8())
        responderKeyDistribution = KeyDistribution(rawValue: try reader.readUInt8())
    }

    func encode(into writer: inout ByteWriter) {
        writer.write(ioCapability.rawValue)
        writer.write(UInt8(oobDataPresent ? 1 : 0))
        writer.write(authenticationRequirements.rawValue)
        writer.write(maximumEncryptionKeySize)
        writer.write(initiatorKeyDistribution.rawValue)
        writer.write(responderKeyDistribution.rawValue)
    }

    /// The IOcap input of f6: AuthReq, OOB flag, IO capability.
    var ioCap: IOCap {
        IOCap(authenticationRequirements: authenticationRequirements.rawValue, oobDataFlag: oobDataPresent ? 1 : 0, ioCapability: ioCapability.rawValue)
    }

    public var description: String {
        "\(ioCapability), OOB \(oobDataPresent ? "yes" : "no"), \(authenticationRequirements), key size \(maximumEncryptionKeySize), initiator keys \(initiatorKeyDistribution), responder keys \(responderKeyDistribution)"
    }
}
