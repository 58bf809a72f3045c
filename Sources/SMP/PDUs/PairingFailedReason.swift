/// The Reason of a Pairing Failed PDU (Core Vol 3 Part H 3.5.5, Table 3.7), by the
/// specification's names. Values the specification reserves decode too (a peer may send
/// them); ``isDefined`` tells them apart.
public struct PairingFailedReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The user input of passkey failed, for example the user cancelled.
    public static let passkeyEntryFailed = PairingFailedReason(rawValue: 0x01)
    /// The OOB data is not available.
    public static let oobNotAvailable = PairingFailedReason(rawValue: 0x02)
    /// The pairing cannot meet the authentication requirements of one device (MITM,
    /// Secure Connections Only).
    public static let authenticationRequirements = PairingFailedReason(rawValue: 0x03)
    /// The confirm value does not match the calculated compare value.
    public static let confirmValueFailed = PairingFailedReason(rawValue: 0x04)
    /// Pairing is not supported by the device.
    public static let pairingNotSupported = PairingFailedReason(rawValue: 0x05)
    /// The resultant encryption key size is not long enough for this device.
    public static let encryptionKeySize = PairingFailedReason(rawValue: 0x06)
    /// The SMP command received is not supported (or not in this role).
    public static let commandNotSupported = PairingFailedReason(rawValue: 0x07)
    /// Pairing failed for a reason no other value covers.
    public static let unspecifiedReason = PairingFailedReason(rawValue: 0x08)
    /// Too little time has passed since the last pairing request or security request.
    public static let repeatedAttempts = PairingFailedReason(rawValue: 0x09)
    /// A command's length or a parameter is invalid.
    public static let invalidParameters = PairingFailedReason(rawValue: 0x0A)
    /// The DHKey Check value received does not match the one calculated.
    public static let dhKeyCheckFailed = PairingFailedReason(rawValue: 0x0B)
    /// The confirm values in the numeric comparison protocol do not match.
    public static let numericComparisonFailed = PairingFailedReason(rawValue: 0x0C)
    /// Pairing over the LE transport failed because BR/EDR pairing is in progress.
    public static let bredrPairingInProgress = PairingFailedReason(rawValue: 0x0D)
    /// The BR/EDR link key or LE LTK cannot be used to derive the other transport's key.
    public static let crossTransportKeyDerivationNotAllowed = PairingFailedReason(rawValue: 0x0E)
    /// The device chose not to accept a distributed key.
    public static let keyRejected = PairingFailedReason(rawValue: 0x0F)
    /// The device is not ready to perform a pairing procedure.
    public static let busy = PairingFailedReason(rawValue: 0x10)

    public var isDefined: Bool { (0x01...0x10).contains(rawValue) }

    public var description: String {
        switch rawValue {
        case 0x01: "Passkey Entry Failed"
        case 0x02: "OOB Not Available"
        case 0x03: "Authentication Requirements"
        case 0x04: "Confirm Value Failed"
        case 0x05: "Pairing Not Supported"
        case 0x06: "Encryption Key Size"
        case 0x07: "Command Not Supported"
        case 0x08: "Unspecified Reason"
        case 0x09: "Repeated Attempts"
        case 0x0A: "Invalid Parameters"
        case 0x0B: "DHKey Check Failed"
        case 0x0C: "Numeric Comparison Failed"
        case 0x0D: "BR/EDR Pairing In Progress"
        case 0x0E: "Cross-transport Key Derivation/Generation Not Allowed"
        case 0x0F: "Key Rejected"
        case 0x10: "Busy"
        default: "reserved reason 0x\(String(rawValue, radix: 16))"
        }
    }
}
