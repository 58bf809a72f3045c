/// The LE features a link layer supports, page 0 (Core Vol 6 Part B 4.6, Table 4.4), as
/// LE Read Local Supported Features and LE Read Remote Features Complete carry them.
///
/// Bits this table does not name are kept and reported by number, so features from a newer
/// controller survive a round trip.
public struct LEFeatures: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private init(bit: Int) { rawValue = 1 << UInt64(bit) }

    public static let leEncryption = LEFeatures(bit: 0)
    public static let connectionParametersRequestProcedure = LEFeatures(bit: 1)
    public static let extendedRejectIndication = LEFeatures(bit: 2)
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(bit: 3)
    public static let lePing = LEFeatures(bit: 4)
    public static let leDataPacketLengthExtension = LEFeatures(bit: 5)
    public static let llPrivacy = LEFeatures(bit: 6)
    public static let extendedScannerFilterPolicies = LEFeatures(bit: 7)
    public static let le2MPHY = LEFeatures(bit: 8)
    public static let stableModulationIndexTransmitter = LEFeatures(bit: 9)
    public static let stableModulationIndexReceiver = LEFeatures(bit: 10)
    public static let leCodedPHY = LEFeatures(bit: 11)
    public static let leExtendedAdvertising = LEFeatures(bit: 12)
    public static let lePeriodicAdvertising = LEFeatures(bit: 13)
    public static let channelSelectionAlgorithm2 = LEFeatures(bit: 14)
    public static let lePowerClass1 = LEFeatures(bit: 15)
    public static let minimumNumberOfUsedChannelsProcedure = LEFeatures(bit: 16)
    public static let connectionCTERequest = LEFeatures(bit: 17)
    public static let connectionCTEResponse = LEFeatures(bit: 18)
    public static let connectionlessCTETransmitter = LEFeatures(bit: 19)
    public static let connectionlessCTEReceiver = LEFeatures(bit: 20)
    public static let antennaSwitchingDuringCTETransmission = LEFeatures(bit: 21)
    public static let antennaSwitchingDuringCTEReception = LEFeatures(bit: 22)
    public static let receivingConstantToneExtensions = LEFeatures(bit: 23)
    public static let periodicAdvertisingSyncTransferSender = LEFeatures(bit: 24)
    public static let periodicAdvertisingSyncTransferRecipient = LEFeatures(bit: 25)
    public static let sleepClockAccuracyUpdates = LEFeatures(bit: 26)
    public static let remotePublicKeyValidation = LEFeatures(bit: 27)
    public static let connectedIsochronousStreamCentral = LEFeatures(bit: 28)
    public static let connectedIsochronousStreamPeripheral = LEFeatures(bit: 29)
    public static let isochronousBroadcaster = LEFeatures(bit: 30)
    public static let synchronizedReceiver = LEFeatures(bit: 31)
    public static let connectedIsochronousStreamHostSupport = LEFeatures(bit: 32)
    /// The specification defines LE Power Control Request twice, as bits 33 and 34, and
    /// requires both to hold the same value; this is the first of the pair.
    public static let lePowerControlRequest = LEFeatures(bit: 33)
    /// The second bit of the LE Power Control Request pair.
    public static let lePowerControlRequestSecondBit = LEFeatures(bit: 34)
    public static let lePathLossMonitoring = LEFeatures(bit: 35)
    public static let periodicAdvertisingADISupport = LEFeatures(bit: 36)
    public static let connectionSubrating = LEFeatures(bit: 37)
    public static let connectionSubratingHostSupport = LEFeatures(bit: 38)
    public static let channelClassification = LEFeatures(bit: 39)
    public static let advertisingCodingSelection = LEFeatures(bit: 40)
    public static let advertisingCodingSelectionHostSupport = LEFeatures(bit: 41)
    public static let decisionBasedAdvertisingFiltering = LEFeatures(bit: 42)
    public static let periodicAdvertisingWithResponsesAdvertiser = LEFeatures(bit: 43)
    public static let periodicAdvertisingWithResponsesScanner = LEFeatures(bit: 44)
    public static let unsegmentedFramedMode = LEFeatures(bit: 45)
    public static let channelSounding = LEFeatures(bit: 46)
    public static let channelSoundingHostSupport = LEFeatures(bit: 47)
    public static let channelSoundingToneQualityIndication = LEFeatures(bit: 48)
    /// Set when the link layer has feature pages beyond this one (Core 6.0).
    public static let llExtendedFeatureSet = LEFeatures(bit: 63)

    /// The specification's name for each defined bit, indexed by bit number; nil for
    /// reserved bits.
    public static let bitNames: [Int: String] = [
        0: "LE Encryption",
        1: "Connection Parameters Request procedure",
        2: "Extended Reject Indication",
        3: "Peripheral-initiated Features Exchange",
        4: "LE Ping",
        5: "LE Data Packet Length Extension",
        6: "LL Privacy",
        7: "Extended Scanner Filter Policies",
        8: "LE 2M PHY",
        9: "Stable Modulation Index - Transmitter",
        10: "Stable Modulation Index - Receiver",
        11: "LE Coded PHY",
        12: "LE Extended Advertising",
        13: "LE Periodic Advertising",
        14: "Channel Selection Algorithm #2",
        15: "LE Power Class 1",
        16: "Minimum Number of Used Channels procedure",
        17: "Connection CTE Request",
        18: "Connection CTE Response",
        19: "Connectionless CTE Transmitter",
        20: "Connectionless CTE Receiver",
        21: "Antenna Switching During CTE Transmission (AoD)",
        22: "Antenna Switching During CTE Reception (AoA)",
        23: "Receiving Constant Tone Extensions",
        24: "Periodic Advertising Sync Transfer - Sender",
        25: "Periodic Advertising Sync Transfer - Recipient",
        26: "Sleep Clock Accuracy Updates",
        27: "Remote Public Key Validation",
        28: "Connected Isochronous Stream - Central",
        29: "Connected Isochronous Stream - Peripheral",
        30: "Isochronous Broadcaster",
        31: "Synchronized Receiver",
        32: "Connected Isochronous Stream (Host Support)",
        33: "LE Power Control Request",
        34: "LE Power Control Request",
        35: "LE Path Loss Monitoring",
        36: "Periodic Advertising ADI support",
        37: "Connection Subrating",
        38: "Connection Subrating (Host Support)",
        39: "Channel Classification",
        40: "Advertising Coding Selection",
        41: "Advertising Coding Selection (Host Support)",
        42: "Decision-Based Advertising Filtering",
        43: "Periodic Advertising with Responses - Advertiser",
        44: "Periodic Advertising with Responses - Scanner",
        45: "Unsegmented Framed Mode",
        46: "Channel Sounding",
        47: "Channel Sounding (Host Support)",
        48: "Channel Sounding Tone Quality Indication",
        63: "LL Extended Feature Set",
    ]

    /// The names of the set bits in bit order; an unnamed set bit reads "bit N".
    public var names: [String] {
        (0..<64).compactMap { bit in
            guard rawValue & (1 << UInt64(bit)) != 0 else { return nil }
            return Self.bitNames[bit] ?? "bit \(bit)"
        }
    }

    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}
