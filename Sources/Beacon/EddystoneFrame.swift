import BluetoothCore

/// One Eddystone frame: the service data of 16-bit service UUID 0xFEAA, told apart by its
/// first octet (Google's Eddystone protocol specification).
public enum EddystoneFrame: Sendable, Hashable, CustomStringConvertible {
    case uid(EddystoneUID)
    case url(EddystoneURL)
    case tlm(EddystoneTLM)
    case eid(EddystoneEID)

    public static let serviceUUID = BluetoothUUID(UInt16(0xFEAA))

    /// The service data after the UUID.
    public var frameBytes: [UInt8] {
        switch self {
        case let .uid(frame): frame.frameBytes
        case let .url(frame): frame.frameBytes
        case let .tlm(frame): frame.frameBytes
        case let .eid(frame): frame.frameBytes
        }
    }

    /// Calibrated TX power at 0 m for the frames that carry it (TLM does not).
    public var txPower: Int8? {
        switch self {
        case let .uid(frame): frame.txPower
        case let .url(frame): frame.txPower
        case let .eid(frame): frame.txPower
        case .tlm: nil
        }
    }

    /// Flags 0x06, the complete 16-bit service list [0xFEAA] and the frame as service data,
    /// as the Eddystone specification requires. Fields are re-checked because the stored
    /// properties may have been changed after a checked initialiser ran.
    public func advertisingData() throws(BeaconEncodingError) -> AdvertisingData {
        switch self {
        case let .uid(frame):
            _ = try EddystoneUID(txPower: Int(frame.txPower), namespace: frame.namespace, instance: frame.instance)
        case let .url(frame):
            _ = try EddystoneURL(txPower: Int(frame.txPower), url: frame.url)
        case let .eid(frame):
            _ = try EddystoneEID(txPower: Int(frame.txPower), ephemeralIdentifier: frame.ephemeralIdentifier)
        case let .tlm(.encrypted(telemetry, _, _)):
            guard telemetry.count == 12 else {
                throw .wrongIdentifierLength(field: "Eddystone-ETLM encrypted telemetry", expected: 12, actual: telemetry.count)
            }
        case .tlm(.plain):
            break
        }
        let bytes = frameBytes
        return try buildAdvertisingData {
            $0.flags(.generalDiscoverableLEOnly)
            $0.serviceUUIDs([Self.serviceUUID])
            $0.serviceData(Self.serviceUUID, bytes)
        }
    }

    /// Decodes service data already known to belong to 0xFEAA.
    public static func decode(frame data: [UInt8]) -> BeaconDecoding<EddystoneFrame> {
        guard let type = data.first else {
            return .malformed(.wrongLength(frame: "Eddystone", expected: 2...20, actual: 0))
        }
        switch type {
        case EddystoneUID.frameType: return lift(EddystoneUID.decode(frame: data), EddystoneFrame.uid)
        case EddystoneURL.frameType: return lift(EddystoneURL.decode(frame: data), EddystoneFrame.url)
        case EddystoneTLM.frameType: return lift(EddystoneTLM.decode(frame: data), EddystoneFrame.tlm)
        case EddystoneEID.frameType: return lift(EddystoneEID.decode(frame: data), EddystoneFrame.eid)
        default: return .malformed(.unknownEddystoneFrameType(type))
        }
    }

    /// The first Eddystone frame in `data`. Service data on 0xFEAA without 0xFEAA in a
    /// service UUID list is malformed: the specification requires both, and scanners that
    /// filter on the list would never see it.
    public static func decode(_ data: AdvertisingData) -> BeaconDecoding<EddystoneFrame> {
        var result = BeaconDecoding<EddystoneFrame>.notThisFormat
        var listed: Bool?
        for service in data.serviceData where service.uuid == serviceUUID {
            if listed == nil { listed = data.serviceUUIDs.contains(serviceUUID) }
            guard listed == true else { return .malformed(.missingEddystoneServiceUUID) }
            let decoded = decode(frame: service.data)
            if case .frame = decoded { return decoded }
            if case .malformed = decoded { result = decoded }
        }
        return result
    }

    public init?(_ data: AdvertisingData) {
        guard let frame = Self.decode(data).frame else { return nil }
        self = frame
    }

    public var description: String {
        switch self {
        case let .uid(frame): frame.description
        case let .url(frame): frame.description
        case let .tlm(frame): frame.description
        case let .eid(frame): frame.description
        }
    }

    private static func lift<Frame>(_ decoded: BeaconDecoding<Frame>, _ wrap: (Frame) -> EddystoneFrame) -> BeaconDecoding<EddystoneFrame> {
        switch decoded {
        case let .frame(frame): .frame(wrap(frame))
        case .notThisFormat: .notThisFormat
        case let .malformed(reason): .malformed(reason)
        }
    }
}
