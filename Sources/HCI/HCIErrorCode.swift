import BluetoothCore

/// A status or reason code from the controller (Core Vol 1 Part F, "Controller Error Codes").
///
/// A struct rather than an enum because the list grows with every specification release:
/// a controller newer than BareBLE may send a code we have no name for, and that must still
/// decode, compare and print.
public struct HCIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public var isSuccess: Bool { self == .success }
    public static let success = HCIErrorCode(rawValue: 0x00)
    public static let unknownCommand = HCIErrorCode(rawValue: 0x01)
    public static let unknownConnectionIdentifier = HCIErrorCode(rawValue: 0x02)
    public static let hardwareFailure = HCIErrorCode(rawValue: 0x03)
    public static let pageTimeout = HCIErrorCode(rawValue: 0x04)
    public static let authenticationFailure = HCIErrorCode(rawValue: 0x05)
    public static let pinOrKeyMissing = HCIErrorCode(rawValue: 0x06)
    public static let memoryCapacityExceeded = HCIErrorCode(rawValue: 0x07)
    public static let connectionTimeout = HCIErrorCode(rawValue: 0x08)
    public static let connectionLimitExceeded = HCIErrorCode(rawValue: 0x09)
    public static let synchronousConnectionLimitToADeviceExceeded = HCIErrorCode(rawValue: 0x0A)
    public static let connectionAlreadyExists = HCIErrorCode(rawValue: 0x0B)
    public static let commandDisallowed = HCIErrorCode(rawValue: 0x0C)
    public static let connectionRejectedDueToLimitedResources = HCIErrorCode(rawValue: 0x0D)
    public static let connectionRejectedDueToSecurityReasons = HCIErrorCode(rawValue: 0x0E)
    public static let connectionRejectedDueToUnacceptableBDADDR = HCIErrorCode(rawValue: 0x0F)
    public static let connectionAcceptTimeoutExceeded = HCIErrorCode(rawValue: 0x10)
    public static let unsupportedFeatureOrParameterValue = HCIErrorCode(rawValue: 0x11)
    public static let invalidCommandParameters = HCIErrorCode(rawValue: 0x12)
    public static let remoteUserTerminatedConnection = HCIErrorCode(rawValue: 0x13)
    public static let remoteDeviceTerminatedConnectionDueToLowResources = HCIErrorCode(rawValue: 0x14)
    public static let remoteDeviceTerminatedConnectionDueToPowerOff = HCIErrorCode(rawValue: 0x15)
    public static let connectionTerminatedByLocalHost = HCIErrorCode(rawValue: 0x16)
    public static let repeatedAttempts = HCIErrorCode(rawValue: 0x17)
    public static let pairingNotAllowed = HCIErrorCode(rawValue: 0x18)
    public static let unknownLMPPDU = HCIErrorCode(rawValue: 0x19)
    /// Formerly "Unsupported LMP Feature".
    public static let unsupportedRemoteFeature = HCIErrorCode(rawValue: 0x1A)
    public static let scoOffsetRejected = HCIErrorCode(rawValue: 0x1B)
    public static let scoIntervalRejected = HCIErrorCode(rawValue: 0x1C)
    public static let scoAirModeRejected = HCIErrorCode(rawValue: 0x1D)
    public static let invalidLMPOrLLParameters = HCIErrorCode(rawValue: 0x1E)
    public static let unspecifiedError = HCIErrorCode(rawValue: 0x1F)
    public static let unsupportedLMPOrLLParameterValue = HCIErrorCode(rawValue: 0x20)
    public static let roleChangeNotAllowed = HCIErrorCode(rawValue: 0x21)
    public static let lmpOrLLResponseTimeout = HCIErrorCode(rawValue: 0x22)
    public static let lmpErrorTransactionCollisionOrLLProcedureCollision = HCIErrorCode(rawValue: 0x23)
    public static let lmpPDUNotAllowed = HCIErrorCode(rawValue: 0x24)
    public static let encryptionModeNotAcceptable = HCIErrorCode(rawValue: 0x25)
    public static let linkKeyCannotBeChanged = HCIErrorCode(rawValue: 0x26)
    public static let requestedQoSNotSupported = HCIErrorCode(rawValue: 0x27)
    public static let instantPassed = HCIErrorCode(rawValue: 0x28)
    public static let pairingWithUnitKeyNotSupported = HCIErrorCode(rawValue: 0x29)
    public static let differentTransactionCollision = HCIErrorCode(rawValue: 0x2A)
    public static let qosUnacceptableParameter = HCIErrorCode(rawValue: 0x2C)
    public static let qosRejected = HCIErrorCode(rawValue: 0x2D)
    public static let channelClassificationNotSupported = HCIErrorCode(rawValue: 0x2E)
    public static let insufficientSecurity = HCIErrorCode(rawValue: 0x2F)
    public static let parameterOutOfMandatoryRange = HCIErrorCode(rawValue: 0x30)
    public static let roleSwitchPending = HCIErrorCode(rawValue: 0x32)
    public static let reservedSlotViolation = HCIErrorCode(rawValue: 0x34)
    public static let roleSwitchFailed = HCIErrorCode(rawValue: 0x35)
    public static let extendedInquiryResponseTooLarge = HCIErrorCode(rawValue: 0x36)
    public static let secureSimplePairingNotSupportedByHost = HCIErrorCode(rawValue: 0x37)
    public static let hostBusyPairing = HCIErrorCode(rawValue: 0x38)
    public static let connectionRejectedDueToNoSuitableChannelFound = HCIErrorCode(rawValue: 0x39)
    public static let controllerBusy = HCIErrorCode(rawValue: 0x3A)
    public static let unacceptableConnectionParameters = HCIErrorCode(rawValue: 0x3B)
    public static let advertisingTimeout = HCIErrorCode(rawValue: 0x3C)
    public static let connectionTerminatedDueToMICFailure = HCIErrorCode(rawValue: 0x3D)
    /// Also "Synchronization Timeout" for periodic advertising.
    public static let connectionFailedToBeEstablished = HCIErrorCode(rawValue: 0x3E)
    /// Previously used: no longer assigned by the specification; kept so old traces print a name.
    public static let macConnectionFailed = HCIErrorCode(rawValue: 0x3F)
    public static let coarseClockAdjustmentRejected = HCIErrorCode(rawValue: 0x40)
    public static let type0SubmapNotDefined = HCIErrorCode(rawValue: 0x41)
    public static let unknownAdvertisingIdentifier = HCIErrorCode(rawValue: 0x42)
    public static let limitReached = HCIErrorCode(rawValue: 0x43)
    public static let operationCancelledByHost = HCIErrorCode(rawValue: 0x44)
    public static let packetTooLong = HCIErrorCode(rawValue: 0x45)
    public static let tooLate = HCIErrorCode(rawValue: 0x46)
    public static let tooEarly = HCIErrorCode(rawValue: 0x47)
    public static let insufficientChannels = HCIErrorCode(rawValue: 0x48)

    /// The specification's name, or nil for a code it does not assign (yet).
    public var name: String? {
        switch rawValue {
        case 0x00: "Success"
        case 0x01: "Unknown HCI Command"
        case 0x02: "Unknown Connection Identifier"
        case 0x03: "Hardware Failure"
        case 0x04: "Page Timeout"
        case 0x05: "Authentication Failure"
        case 0x06: "PIN or Key Missing"
        case 0x07: "Memory Capacity Exceeded"
        case 0x08: "Connection Timeout"
        case 0x09: "Connection Limit Exceeded"
        case 0x0A: "Synchronous Connection Limit To A Device Exceeded"
        case 0x0B: "Connection Already Exists"
        case 0x0C: "Command Disallowed"
        case 0x0D: "Connection Rejected due to Limited Resources"
        case 0x0E: "Connection Rejected Due To Security Reasons"
        case 0x0F: "Connection Rejected due to Unacceptable BD_ADDR"
        case 0x10: "Connection Accept Timeout Exceeded"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x13: "Remote User Terminated Connection"
        case 0x14: "Remote Device Terminated Connection due to Low Resources"
        case 0x15: "Remote Device Terminated Connection due to Power Off"
        case 0x16: "Connection Terminated By Local Host"
        case 0x17: "Repeated Attempts"
        case 0x18: "Pairing Not Allowed"
        case 0x19: "Unknown LMP PDU"
        case 0x1A: "Unsupported Remote Feature"
        case 0x1B: "SCO Offset Rejected"
        case 0x1C: "SCO Interval Rejected"
        case 0x1D: "SCO Air Mode Rejected"
        case 0x1E: "Invalid LMP Parameters / Invalid LL Parameters"
        case 0x1F: "Unspecified Error"
        case 0x20: "Unsupported LMP Parameter Value / Unsupported LL Parameter Value"
        case 0x21: "Role Change Not Allowed"
        case 0x22: "LMP Response Timeout / LL Response Timeout"
        case 0x23: "LMP Error Transaction Collision / LL Procedure Collision"
        case 0x24: "LMP PDU Not Allowed"
        case 0x25: "Encryption Mode Not Acceptable"
        case 0x26: "Link Key cannot be Changed"
        case 0x27: "Requested QoS Not Supported"
        case 0x28: "Instant Passed"
        case 0x29: "Pairing With Unit Key Not Supported"
        case 0x2A: "Different Transaction Collision"
        case 0x2C: "QoS Unacceptable Parameter"
        case 0x2D: "QoS Rejected"
        case 0x2E: "Channel Classification Not Supported"
        case 0x2F: "Insufficient Security"
        case 0x30: "Parameter Out Of Mandatory Range"
        case 0x32: "Role Switch Pending"
        case 0x34: "Reserved Slot Violation"
        case 0x35: "Role Switch Failed"
        case 0x36: "Extended Inquiry Response Too Large"
        case 0x37: "Secure Simple Pairing Not Supported By Host"
        case 0x38: "Host Busy - Pairing"
        case 0x39: "Connection Rejected due to No Suitable Channel Found"
        case 0x3A: "Controller Busy"
        case 0x3B: "Unacceptable Connection Parameters"
        case 0x3C: "Advertising Timeout"
        case 0x3D: "Connection Terminated due to MIC Failure"
        case 0x3E: "Connection Failed to be Established / Synchronization Timeout"
        case 0x3F: "MAC Connection Failed"
        case 0x40: "Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging"
        case 0x41: "Type0 Submap Not Defined"
        case 0x42: "Unknown Advertising Identifier"
        case 0x43: "Limit Reached"
        case 0x44: "Operation Cancelled by Host"
        case 0x45: "Packet Too Long"
        case 0x46: "Too Late"
        case 0x47: "Too Early"
        case 0x48: "Insufficient Channels"
        default: nil
        }
    }

    /// "Unknown HCI Command (0x01)"; a code without a name prints as "error 0x4F".
    public var description: String {
        let hex = "0x" + Hex.string([rawValue])
        guard let name else { return "error \(hex)" }
        return "\(name) (\(hex))"
    }
}

extension ByteReader {
    public mutating func readErrorCode() throws(DecodeError) -> HCIErrorCode {
        HCIErrorCode(rawValue: try readUInt8())
    }
}

extension ByteWriter {
    public mutating func write(_ code: HCIErrorCode) { write(code.rawValue) }
}
