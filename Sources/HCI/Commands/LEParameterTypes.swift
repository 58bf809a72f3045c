import BluetoothCore

// Small parameter value sets shared by several LE commands. Where the specification
// reserves the remaining values for future use these are open structs over the raw octet,
// not closed enums, so a command from a newer host still decodes (and traces) faithfully.

/// A set of LE PHYs as a bitmask: TX_PHYs, RX_PHYs, Scanning_PHYs, Initiating_PHYs
/// (Core Vol 4 Part E 7.8.48, 7.8.64, 7.8.66). Reserved bits are kept as they came.
public struct LEPHYMask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let le1M = LEPHYMask(rawValue: 1 << 0)
    public static let le2M = LEPHYMask(rawValue: 1 << 1)
    public static let leCoded = LEPHYMask(rawValue: 1 << 2)
}

/// LE Set Default PHY / LE Set PHY All_PHYs: which directions the host has no preference for,
/// in which case the matching TX_PHYs / RX_PHYs octet is ignored by the controller.
public struct LEAllPHYsPreference: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let noTransmitterPreference = LEAllPHYsPreference(rawValue: 1 << 0)
    public static let noReceiverPreference = LEAllPHYsPreference(rawValue: 1 << 1)
}

/// LE Set PHY PHY_Options: the coding the host prefers when transmitting on LE Coded.
public struct LECodedPHYOptions: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let noPreference = LECodedPHYOptions(rawValue: 0)
    public static let preferS2 = LECodedPHYOptions(rawValue: 1)
    public static let preferS8 = LECodedPHYOptions(rawValue: 2)
}

/// LE_Scan_Type / Scan_Type: whether the scanner sends scan requests.
public struct LEScanType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let passive = LEScanType(rawValue: 0x00)
    public static let active = LEScanType(rawValue: 0x01)

    public var description: String {
        switch rawValue {
        case 0x00: "passive"
        case 0x01: "active"
        default: "reserved scan type \(reservedValueHex(rawValue))"
        }
    }
}

/// Scanning_Filter_Policy (Core Vol 4 Part E 7.8.10): whether advertisers outside the Filter
/// Accept List are reported, and (extended policies) how directed advertising to an
/// unresolved RPA is handled.
public struct ScanningFilterPolicy: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let basicUnfiltered = ScanningFilterPolicy(rawValue: 0x00)
    public static let basicFiltered = ScanningFilterPolicy(rawValue: 0x01)
    public static let extendedUnfiltered = ScanningFilterPolicy(rawValue: 0x02)
    public static let extendedFiltered = ScanningFilterPolicy(rawValue: 0x03)
}

/// Initiator_Filter_Policy (Core Vol 4 Part E 7.8.12): connect to the given peer, or to any
/// device in the Filter Accept List.
public struct InitiatorFilterPolicy: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let peerAddress = InitiatorFilterPolicy(rawValue: 0x00)
    public static let filterAcceptList = InitiatorFilterPolicy(rawValue: 0x01)
}

/// Advertising_Filter_Policy (Core Vol 4 Part E 7.8.5): which scan and connection requests
/// the advertiser answers.
public struct AdvertisingFilterPolicy: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let acceptAll = AdvertisingFilterPolicy(rawValue: 0x00)
    public static let filterScanRequests = AdvertisingFilterPolicy(rawValue: 0x01)
    public static let filterConnectionRequests = AdvertisingFilterPolicy(rawValue: 0x02)
    public static let filterScanAndConnectionRequests = AdvertisingFilterPolicy(rawValue: 0x03)
}

/// Advertising_Channel_Map / Primary_Advertising_Channel_Map: which of the three primary
/// advertising channels are used.
public struct AdvertisingChannelMap: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let channel37 = AdvertisingChannelMap(rawValue: 1 << 0)
    public static let channel38 = AdvertisingChannelMap(rawValue: 1 << 1)
    public static let channel39 = AdvertisingChannelMap(rawValue: 1 << 2)
    public static let all: AdvertisingChannelMap = [.channel37, .channel38, .channel39]
}
