/// The Event_Mask of Set Event Mask (Core Vol 4 Part E 7.3.1): which events the controller
/// may send. Command Complete, Command Status and Number Of Completed Packets cannot be
/// masked and so have no bit.
public struct EventMask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private init(bit: Int) { rawValue = 1 << UInt64(bit) }

    public static let inquiryComplete = EventMask(bit: 0)
    public static let inquiryResult = EventMask(bit: 1)
    public static let connectionComplete = EventMask(bit: 2)
    public static let connectionRequest = EventMask(bit: 3)
    public static let disconnectionComplete = EventMask(bit: 4)
    public static let authenticationComplete = EventMask(bit: 5)
    public static let remoteNameRequestComplete = EventMask(bit: 6)
    /// Encryption Change [v1]; v2 is enabled on page 2 (``EventMaskPage2/encryptionChangeV2``).
    public static let encryptionChangeV1 = EventMask(bit: 7)
    public static let changeConnectionLinkKeyComplete = EventMask(bit: 8)
    public static let linkKeyTypeChanged = EventMask(bit: 9)
    public static let readRemoteSupportedFeaturesComplete = EventMask(bit: 10)
    public static let readRemoteVersionInformationComplete = EventMask(bit: 11)
    public static let qosSetupComplete = EventMask(bit: 12)
    public static let hardwareError = EventMask(bit: 15)
    public static let flushOccurred = EventMask(bit: 16)
    public static let roleChange = EventMask(bit: 17)
    public static let modeChange = EventMask(bit: 19)
    public static let returnLinkKeys = EventMask(bit: 20)
    public static let pinCodeRequest = EventMask(bit: 21)
    public static let linkKeyRequest = EventMask(bit: 22)
    public static let linkKeyNotification = EventMask(bit: 23)
    public static let loopbackCommand = EventMask(bit: 24)
    public static let dataBufferOverflow = EventMask(bit: 25)
    public static let maxSlotsChange = EventMask(bit: 26)
    public static let readClockOffsetComplete = EventMask(bit: 27)
    public static let connectionPacketTypeChanged = EventMask(bit: 28)
    public static let qosViolation = EventMask(bit: 29)
    public static let pageScanRepetitionModeChange = EventMask(bit: 31)
    public static let flowSpecificationComplete = EventMask(bit: 32)
    public static let inquiryResultWithRSSI = EventMask(bit: 33)
    public static let readRemoteExtendedFeaturesComplete = EventMask(bit: 34)
    public static let synchronousConnectionComplete = EventMask(bit: 43)
    public static let synchronousConnectionChanged = EventMask(bit: 44)
    public static let sniffSubrating = EventMask(bit: 45)
    public static let extendedInquiryResult = EventMask(bit: 46)
    public static let encryptionKeyRefreshComplete = EventMask(bit: 47)
    public static let ioCapabilityRequest = EventMask(bit: 48)
    public static let ioCapabilityResponse = EventMask(bit: 49)
    public static let userConfirmationRequest = EventMask(bit: 50)
    public static let userPasskeyRequest = EventMask(bit: 51)
    public static let remoteOOBDataRequest = EventMask(bit: 52)
    public static let simplePairingComplete = EventMask(bit: 53)
    public static let linkSupervisionTimeoutChanged = EventMask(bit: 55)
    public static let enhancedFlushComplete = EventMask(bit: 56)
    public static let userPasskeyNotification = EventMask(bit: 58)
    public static let keypressNotification = EventMask(bit: 59)
    public static let remoteHostSupportedFeaturesNotification = EventMask(bit: 60)
    public static let leMeta = EventMask(bit: 61)

    /// The value after HCI_Reset: bits 0...44 set.
    public static let specificationDefault = EventMask(rawValue: 0x0000_1FFF_FFFF_FFFF)

    /// What an LE-only host needs: the events the HCI and LE layers of BareBLE act on.
    public static let leHost: EventMask = [
        .disconnectionComplete, .encryptionChangeV1, .hardwareError, .dataBufferOverflow,
        .encryptionKeyRefreshComplete, .leMeta,
    ]
}

/// The Event_Mask_Page_2 of Set Event Mask Page 2 (Core Vol 4 Part E 7.3.69); only the bits
/// an LE host may want are named. All bits are clear after HCI_Reset.
public struct EventMaskPage2: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let authenticatedPayloadTimeoutExpired = EventMaskPage2(rawValue: 1 << 23)
    /// Encryption Change [v2] (event 0x59), which adds the key size.
    public static let encryptionChangeV2 = EventMaskPage2(rawValue: 1 << 25)

    public static let specificationDefault = EventMaskPage2([])
}

/// The LE_Event_Mask of LE Set Event Mask (Core Vol 4 Part E 7.8.1): subevent code k is
/// bit k - 1.
public struct LEEventMask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The bit for LE Meta subevent `subeventCode` (1...64); empty for codes outside that range.
    public init(subeventCode: UInt8) {
        guard (1...64).contains(subeventCode) else {
            rawValue = 0
            return
        }
        rawValue = 1 << UInt64(subeventCode - 1)
    }

    public static let connectionComplete = LEEventMask(subeventCode: LEMetaEvent.Code.connectionComplete)
    public static let advertisingReport = LEEventMask(subeventCode: LEMetaEvent.Code.advertisingReport)
    public static let connectionUpdateComplete = LEEventMask(subeventCode: LEMetaEvent.Code.connectionUpdateComplete)
    public static let readRemoteFeaturesComplete = LEEventMask(subeventCode: LEMetaEvent.Code.readRemoteFeaturesComplete)
    public static let longTermKeyRequest = LEEventMask(subeventCode: LEMetaEvent.Code.longTermKeyRequest)
    public static let remoteConnectionParameterRequest = LEEventMask(subeventCode: 0x06)
    public static let dataLengthChange = LEEventMask(subeventCode: LEMetaEvent.Code.dataLengthChange)
    public static let readLocalP256PublicKeyComplete = LEEventMask(subeventCode: 0x08)
    public static let generateDHKeyComplete = LEEventMask(subeventCode: 0x09)
    public static let enhancedConnectionCompleteV1 = LEEventMask(subeventCode: LEMetaEvent.Code.enhancedConnectionCompleteV1)
    public static let directedAdvertisingReport = LEEventMask(subeventCode: LEMetaEvent.Code.directedAdvertisingReport)
    public static let phyUpdateComplete = LEEventMask(subeventCode: LEMetaEvent.Code.phyUpdateComplete)
    public static let extendedAdvertisingReport = LEEventMask(subeventCode: LEMetaEvent.Code.extendedAdvertisingReport)
    public static let scanTimeout = LEEventMask(subeventCode: LEMetaEvent.Code.scanTimeout)
    public static let advertisingSetTerminated = LEEventMask(subeventCode: LEMetaEvent.Code.advertisingSetTerminated)
    public static let scanRequestReceived = LEEventMask(subeventCode: LEMetaEvent.Code.scanRequestReceived)
    public static let channelSelectionAlgorithm = LEEventMask(subeventCode: LEMetaEvent.Code.channelSelectionAlgorithm)
    public static let enhancedConnectionCompleteV2 = LEEventMask(subeventCode: LEMetaEvent.Code.enhancedConnectionCompleteV2)

    /// The value after HCI_Reset: subevents 0x01...0x05.
    public static let specificationDefault = LEEventMask(rawValue: 0x0000_0000_0000_001F)
}
