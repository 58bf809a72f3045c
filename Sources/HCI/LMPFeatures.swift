/// The LMP features of a controller, page 0 (Core Vol 2 Part C 3.3, Table 3.2), as Read
/// Local Supported Features returns them. An LE host reads them for the LE and BR/EDR bits.
///
/// Unnamed bits are kept and reported by number.
public struct LMPFeatures: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private init(bit: Int) { rawValue = 1 << UInt64(bit) }

    public static let threeSlotPackets = LMPFeatures(bit: 0)
    public static let fiveSlotPackets = LMPFeatures(bit: 1)
    public static let encryption = LMPFeatures(bit: 2)
    public static let slotOffset = LMPFeatures(bit: 3)
    public static let timingAccuracy = LMPFeatures(bit: 4)
    public static let roleSwitch = LMPFeatures(bit: 5)
    public static let holdMode = LMPFeatures(bit: 6)
    public static let sniffMode = LMPFeatures(bit: 7)
    public static let powerControlRequests = LMPFeatures(bit: 9)
    public static let channelQualityDrivenDataRate = LMPFeatures(bit: 10)
    public static let scoLink = LMPFeatures(bit: 11)
    public static let hv2Packets = LMPFeatures(bit: 12)
    public static let hv3Packets = LMPFeatures(bit: 13)
    public static let muLawLogSynchronousData = LMPFeatures(bit: 14)
    public static let aLawLogSynchronousData = LMPFeatures(bit: 15)
    public static let cvsdSynchronousData = LMPFeatures(bit: 16)
    public static let pagingParameterNegotiation = LMPFeatures(bit: 17)
    public static let powerControl = LMPFeatures(bit: 18)
    public static let transparentSynchronousData = LMPFeatures(bit: 19)
    public static let flowControlLagLeastSignificantBit = LMPFeatures(bit: 20)
    public static let flowControlLagMiddleBit = LMPFeatures(bit: 21)
    public static let flowControlLagMostSignificantBit = LMPFeatures(bit: 22)
    public static let broadcastEncryption = LMPFeatures(bit: 23)
    public static let enhancedDataRateACL2MbpsMode = LMPFeatures(bit: 25)
    public static let enhancedDataRateACL3MbpsMode = LMPFeatures(bit: 26)
    public static let enhancedInquiryScan = LMPFeatures(bit: 27)
    public static let interlacedInquiryScan = LMPFeatures(bit: 28)
    public static let interlacedPageScan = LMPFeatures(bit: 29)
    public static let rssiWithInquiryResults = LMPFeatures(bit: 30)
    public static let extendedSCOLink = LMPFeatures(bit: 31)
    public static let ev4Packets = LMPFeatures(bit: 32)
    public static let ev5Packets = LMPFeatures(bit: 33)
    public static let afhCapablePeripheral = LMPFeatures(bit: 35)
    public static let afhClassificationPeripheral = LMPFeatures(bit: 36)
    public static let brEdrNotSupported = LMPFeatures(bit: 37)
    public static let leSupportedController = LMPFeatures(bit: 38)
    public static let threeSlotEnhancedDataRateACLPackets = LMPFeatures(bit: 39)
    public static let fiveSlotEnhancedDataRateACLPackets = LMPFeatures(bit: 40)
    public static let sniffSubrating = LMPFeatures(bit: 41)
    public static let pauseEncryption = LMPFeatures(bit: 42)
    public static let afhCapableCentral = LMPFeatures(bit: 43)
    public static let afhClassificationCentral = LMPFeatures(bit: 44)
    public static let enhancedDataRateESCO2MbpsMode = LMPFeatures(bit: 45)
    public static let enhancedDataRateESCO3MbpsMode = LMPFeatures(bit: 46)
    public static let threeSlotEnhancedDataRateESCOPackets = LMPFeatures(bit: 47)
    public static let extendedInquiryResponse = LMPFeatures(bit: 48)
    /// "Simultaneous LE and BR/EDR to Same Device Capable (Controller)".
    public static let simultaneousLEAndBREDRController = LMPFeatures(bit: 49)
    public static let secureSimplePairingController = LMPFeatures(bit: 51)
    public static let encapsulatedPDU = LMPFeatures(bit: 52)
    public static let erroneousDataReporting = LMPFeatures(bit: 53)
    public static let nonFlushablePacketBoundaryFlag = LMPFeatures(bit: 54)
    public static let linkSupervisionTimeoutChangedEvent = LMPFeatures(bit: 56)
    public static let variableInquiryTxPowerLevel = LMPFeatures(bit: 57)
    public static let enhancedPowerControl = LMPFeatures(bit: 58)
    public static let extendedFeatures = LMPFeatures(bit: 63)

    /// The specification's name for each defined bit; nil for reserved or previously used bits.
    public static let bitNames: [Int: String] = [
        0: "3 slot packets",
        1: "5 slot packets",
        2: "Encryption",
        3: "Slot offset",
        4: "Timing accuracy",
        5: "Role switch",
        6: "Hold mode",
        7: "Sniff mode",
        9: "Power control requests",
        10: "Channel quality driven data rate (CQDDR)",
        11: "SCO link",
        12: "HV2 packets",
        13: "HV3 packets",
        14: "u-law log synchronous data",
        15: "A-law log synchronous data",
        16: "CVSD synchronous data",
        17: "Paging parameter negotiation",
        18: "Power control",
        19: "Transparent synchronous data",
        20: "Flow control lag (least significant bit)",
        21: "Flow control lag (middle bit)",
        22: "Flow control lag (most significant bit)",
        23: "Broadcast Encryption",
        25: "Enhanced Data Rate ACL 2 Mb/s mode",
        26: "Enhanced Data Rate ACL 3 Mb/s mode",
        27: "Enhanced inquiry scan",
        28: "Interlaced inquiry scan",
        29: "Interlaced page scan",
        30: "RSSI with inquiry results",
        31: "Extended SCO link (EV3 packets)",
        32: "EV4 packets",
        33: "EV5 packets",
        35: "AFH capable Peripheral",
        36: "AFH classification Peripheral",
        37: "BR/EDR Not Supported",
        38: "LE Supported (Controller)",
        39: "3-slot Enhanced Data Rate ACL packets",
        40: "5-slot Enhanced Data Rate ACL packets",
        41: "Sniff subrating",
        42: "Pause encryption",
        43: "AFH capable Central",
        44: "AFH classification Central",
        45: "Enhanced Data Rate eSCO 2 Mb/s mode",
        46: "Enhanced Data Rate eSCO 3 Mb/s mode",
        47: "3-slot Enhanced Data Rate eSCO packets",
        48: "Extended Inquiry Response",
        49: "Simultaneous LE and BR/EDR to Same Device Capable (Controller)",
        51: "Secure Simple Pairing (Controller Support)",
        52: "Encapsulated PDU",
        53: "Erroneous Data Reporting",
        54: "Non-flushable Packet Boundary Flag",
        56: "HCI_Link_Supervision_Timeout_Changed event",
        57: "Variable Inquiry TX Power Level",
        58: "Enhanced Power Control",
        63: "Extended features",
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
