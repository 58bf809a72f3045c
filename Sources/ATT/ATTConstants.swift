/// Numbers the Attribute Protocol fixes (Core 5.4 Vol 3 Part F), in one place.
public enum ATTConstants {
    /// ATT_MTU on an LE bearer before any exchange, and the least a server may offer
    /// (Vol 3 Part F 3.2.8; Vol 3 Part G 5.2.1).
    public static let minimumLEMTU: UInt16 = 23

    /// What the client asks for by default: the longest attribute value (512) plus the
    /// largest header that carries one whole (Read Blob/Prepare Write's 5 bytes).
    public static let defaultClientMTU: UInt16 = 517

    /// The longest attribute value (Vol 3 Part F 3.2.9).
    public static let maximumAttributeValueLength = 512

    /// A transaction not completed within this time has failed and the bearer is dead
    /// (Vol 3 Part F 3.3.3).
    public static let transactionTimeout: Duration = .seconds(30)

    /// Length of the Authentication Signature that ends a Signed Write Command (Vol 3 Part F
    /// 3.4.5.4; the signature's contents are SMP's business, Vol 3 Part H 2.4.5).
    public static let authenticationSignatureLength = 12
}
