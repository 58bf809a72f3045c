import BluetoothCore

/// The parameters of one LE Meta subevent type (Core Vol 4 Part E 7.7.65), declared once.
///
/// `init(decoding:)` starts after the subevent code and must consume every parameter byte.
public protocol LEMetaSubevent: Sendable, Equatable {
    static var subeventCode: UInt8 { get }
    init(decoding reader: inout ByteReader) throws(DecodeError)
    func encode(into writer: inout ByteWriter)
}

/// The LE Meta event (code 0x3E): a subevent code, then that subevent's parameters.
///
/// Subevents BareBLE does not model decode to ``unknown(subeventCode:parameters:)`` with
/// their bytes kept, for the same reason unknown events do: they must never stop the stack.
public enum LEMetaEvent: Sendable, Equatable {
    /// 0x01
    case connectionComplete(LEConnectionComplete)
    /// 0x02
    case advertisingReport(LEAdvertisingReport)
    /// 0x03
    case connectionUpdateComplete(LEConnectionUpdateComplete)
    /// 0x04
    case readRemoteFeaturesComplete(LEReadRemoteFeaturesComplete)
    /// 0x05
    case longTermKeyRequest(LELongTermKeyRequest)
    /// 0x07
    case dataLengthChange(LEDataLengthChange)
    /// 0x0A (v1) or 0x29 (v2)
    case enhancedConnectionComplete(LEEnhancedConnectionComplete)
    /// 0x0B
    case directedAdvertisingReport(LEDirectedAdvertisingReport)
    /// 0x0C
    case phyUpdateComplete(LEPHYUpdateComplete)
    /// 0x0D
    case extendedAdvertisingReport(LEExtendedAdvertisingReport)
    /// 0x11
    case scanTimeout(LEScanTimeout)
    /// 0x12
    case advertisingSetTerminated(LEAdvertisingSetTerminated)
    /// 0x13
    case scanRequestReceived(LEScanRequestReceived)
    /// 0x14
    case channelSelectionAlgorithm(LEChannelSelectionAlgorithm)
    case unknown(subeventCode: UInt8, parameters: [UInt8])

    /// The subevent codes this enum models (Core Vol 4 Part E 7.7.65).
    public enum Code {
        public static let connectionComplete: UInt8 = 0x01
        public static let advertisingReport: UInt8 = 0x02
        public static let connectionUpdateComplete: UInt8 = 0x03
        public static let readRemoteFeaturesComplete: UInt8 = 0x04
        public static let longTermKeyRequest: UInt8 = 0x05
        public static let dataLengthChange: UInt8 = 0x07
        public static let enhancedConnectionCompleteV1: UInt8 = 0x0A
        public static let directedAdvertisingReport: UInt8 = 0x0B
        public static let phyUpdateComplete: UInt8 = 0x0C
        public static let extendedAdvertisingReport: UInt8 = 0x0D
        public static let scanTimeout: UInt8 = 0x11
        public static let advertisingSetTerminated: UInt8 = 0x12
        public static let scanRequestReceived: UInt8 = 0x13
        public static let channelSelectionAlgorithm: UInt8 = 0x14
        public static let enhancedConnectionCompleteV2: UInt8 = 0x29
    }

    /// Decodes the LE Meta event's parameters: subevent code, then the subevent. Bytes left
    /// over after a modelled subevent are an error.
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        let code = try reader.readUInt8()
        switch code {
        case Code.connectionComplete: self = .connectionComplete(try .init(decoding: &reader))
        case Code.advertisingReport: self = .advertisingReport(try .init(decoding: &reader))
        case Code.connectionUpdateComplete: self = .connectionUpdateComplete(try .init(decoding: &reader))
        case Code.readRemoteFeaturesComplete: self = .readRemoteFeaturesComplete(try .init(decoding: &reader))
        case Code.longTermKeyRequest: self = .longTermKeyRequest(try .init(decoding: &reader))
        case Code.dataLengthChange: self = .dataLengthChange(try .init(decoding: &reader))
        case Code.enhancedConnectionCompleteV1:
            self = .enhancedConnectionComplete(try .init(decoding: &reader, isVersion2: false))
        case Code.enhancedConnectionCompleteV2:
            self = .enhancedConnectionComplete(try .init(decoding: &reader, isVersion2: true))
        case Code.directedAdvertisingReport: self = .directedAdvertisingReport(try .init(decoding: &reader))
        case Code.phyUpdateComplete: self = .phyUpdateComplete(try .init(decoding: &reader))
        case Code.extendedAdvertisingReport: self = .extendedAdvertisingReport(try .init(decoding: &reader))
        case Code.scanTimeout: self = .scanTimeout(try .init(decoding: &reader))
        case Code.advertisingSetTerminated: self = .advertisingSetTerminated(try .init(decoding: &reader))
        case Code.scanRequestReceived: self = .scanRequestReceived(try .init(decoding: &reader))
        case Code.channelSelectionAlgorithm: self = .channelSelectionAlgorithm(try .init(decoding: &reader))
        default: self = .unknown(subeventCode: code, parameters: reader.readRemaining())
        }
        try reader.expectEnd()
    }

    /// The subevent code this value encodes with.
    public var subeventCode: UInt8 {
        switch self {
        case .connectionComplete: Code.connectionComplete
        case .advertisingReport: Code.advertisingReport
        case .connectionUpdateComplete: Code.connectionUpdateComplete
        case .readRemoteFeaturesComplete: Code.readRemoteFeaturesComplete
        case .longTermKeyRequest: Code.longTermKeyRequest
        case .dataLengthChange: Code.dataLengthChange
        case .enhancedConnectionComplete(let event): event.subeventCode
        case .directedAdvertisingReport: Code.directedAdvertisingReport
        case .phyUpdateComplete: Code.phyUpdateComplete
        case .extendedAdvertisingReport: Code.extendedAdvertisingReport
        case .scanTimeout: Code.scanTimeout
        case .advertisingSetTerminated: Code.advertisingSetTerminated
        case .scanRequestReceived: Code.scanRequestReceived
        case .channelSelectionAlgorithm: Code.channelSelectionAlgorithm
        case .unknown(let code, _): code
        }
    }

    /// Writes the subevent code and the subevent's parameters.
    public func encode(into writer: inout ByteWriter) {
        writer.write(subeventCode)
        switch self {
        case .connectionComplete(let event): event.encode(into: &writer)
        case .advertisingReport(let event): event.encode(into: &writer)
        case .connectionUpdateComplete(let event): event.encode(into: &writer)
        case .readRemoteFeaturesComplete(let event): event.encode(into: &writer)
        case .longTermKeyRequest(let event): event.encode(into: &writer)
        case .dataLengthChange(let event): event.encode(into: &writer)
        case .enhancedConnectionComplete(let event): event.encode(into: &writer)
        case .directedAdvertisingReport(let event): event.encode(into: &writer)
        case .phyUpdateComplete(let event): event.encode(into: &writer)
        case .extendedAdvertisingReport(let event): event.encode(into: &writer)
        case .scanTimeout(let event): event.encode(into: &writer)
        case .advertisingSetTerminated(let event): event.encode(into: &writer)
        case .scanRequestReceived(let event): event.encode(into: &writer)
        case .channelSelectionAlgorithm(let event): event.encode(into: &writer)
        case .unknown(_, let bytes): writer.write(contentsOf: bytes)
        }
    }
}
