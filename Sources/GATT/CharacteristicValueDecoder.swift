import BluetoothCore

/// A characteristic or descriptor value decoded for people: what an explorer prints as
/// "decoded" next to the hex.
public enum DecodedValue: Sendable, CustomStringConvertible {
    case batteryLevel(BatteryLevel)
    case heartRateMeasurement(HeartRateMeasurement)
    case bodySensorLocation(BodySensorLocation)
    case pnpID(PnPID)
    case appearance(Appearance)
    /// A UTF-8 string characteristic or descriptor.
    case text(String)
    case characteristicExtendedProperties(CharacteristicExtendedProperties)
    case clientCharacteristicConfiguration(ClientCharacteristicConfiguration)
    case characteristicPresentationFormat(CharacteristicPresentationFormat)
    /// Read by a Characteristic Presentation Format descriptor.
    case formatted(FormattedValue)
    /// From a decoder registered outside this module (a profile's own characteristic).
    case custom(any CustomStringConvertible & Sendable)

    public var description: String {
        switch self {
        case .batteryLevel(let value): value.description
        case .heartRateMeasurement(let value): value.description
        case .bodySensorLocation(let value): value.description
        case .pnpID(let value): value.description
        case .appearance(let value): "\(value.name) (0x\(hex16(value.rawValue)))"
        case .text(let value): "\"\(value)\""
        case .characteristicExtendedProperties(let value): value.description
        case .clientCharacteristicConfiguration(let value): value.description
        case .characteristicPresentationFormat(let value): value.description
        case .formatted(let value): value.description
        case .custom(let value): value.description
        }
    }
}

/// Decoders for characteristic and descriptor values, keyed by attribute type UUID.
///
/// A decoder registered for the UUID wins, because the characteristic's specification
/// defines its layout; without one, a Characteristic Presentation Format descriptor read
/// from the same characteristic decides; without either there is nothing to decode (nil).
/// Every decoder is total: malformed bytes give a ``DecodeError``, never a trap.
public struct CharacteristicValueDecoder: Sendable {
    public typealias Decode = @Sendable ([UInt8]) throws(DecodeError) -> DecodedValue

    private var decoders: [BluetoothUUID: Decode] = [:]

    /// No decoders at all.
    public init() {}

    /// Every decoder this module has.
    public static let standard: CharacteristicValueDecoder = {
        var registry = CharacteristicValueDecoder()
        registry.register(GATTUUID.batteryLevel) { bytes throws(DecodeError) in .batteryLevel(try BatteryLevel(bytes: bytes)) }
        registry.register(GATTUUID.heartRateMeasurement) { bytes throws(DecodeError) in
            .heartRateMeasurement(try HeartRateMeasurement(bytes: bytes))
        }
        registry.register(GATTUUID.bodySensorLocation) { bytes throws(DecodeError) in
            .bodySensorLocation(try BodySensorLocation(bytes: bytes))
        }
        registry.register(GATTUUID.pnpID) { bytes throws(DecodeError) in .pnpID(try PnPID(bytes: bytes)) }
        registry.register(GATTUUID.appearance) { bytes throws(DecodeError) in
            var reader = ByteReader(bytes)
            let raw = try reader.readUInt16()
            try reader.expectEnd()
            return .appearance(Appearance(raw))
        }
        for uuid in textCharacteristics {
            registry.register(uuid) { bytes in .text(GATTString.decode(bytes)) }
        }
        registry.register(GATTUUID.characteristicExtendedProperties) { bytes throws(DecodeError) in
            .characteristicExtendedProperties(try CharacteristicExtendedProperties(bytes: bytes))
        }
        registry.register(GATTUUID.clientCharacteristicConfiguration) { bytes throws(DecodeError) in
            .clientCharacteristicConfiguration(try ClientCharacteristicConfiguration(bytes: bytes))
        }
        registry.register(GATTUUID.characteristicPresentationFormat) { bytes throws(DecodeError) in
            .characteristicPresentationFormat(try CharacteristicPresentationFormat(bytes: bytes))
        }
        return registry
    }()

    /// The UTF-8 string characteristics and descriptors (decoded with replacement).
    public static let textCharacteristics: [BluetoothUUID] = [
        GATTUUID.deviceName, GATTUUID.manufacturerNameString, GATTUUID.modelNumberString,
        GATTUUID.serialNumberString, GATTUUID.firmwareRevisionString, GATTUUID.hardwareRevisionString,
        GATTUUID.softwareRevisionString, GATTUUID.characteristicUserDescription,
    ]

    /// Adds or replaces the decoder for `uuid`: how a profile module teaches an explorer
    /// its own characteristics.
    public mutating func register(_ uuid: BluetoothUUID, _ decode: @escaping Decode) {
        decoders[uuid] = decode
    }

    /// The UUIDs with a decoder of their own.
    public var registeredUUIDs: [BluetoothUUID] { Array(decoders.keys) }

    /// Whether ``decode(_:uuid:presentationFormat:)`` would give a result.
    public func canDecode(_ uuid: BluetoothUUID, presentationFormat: CharacteristicPresentationFormat? = nil) -> Bool {
        decoders[uuid] != nil || presentationFormat != nil
    }

    /// The decoded value or why it could not be decoded; nil when there is no decoder for
    /// `uuid` and no presentation format to fall back on.
    public func decode(
        _ bytes: [UInt8], uuid: BluetoothUUID, presentationFormat: CharacteristicPresentationFormat? = nil
    ) -> Result<DecodedValue, DecodeError>? {
        if let decoder = decoders[uuid] {
            return Result { () throws(DecodeError) in try decoder(bytes) }
        }
        if let presentationFormat {
            return Result { () throws(DecodeError) in .formatted(try FormattedValue(bytes: bytes, format: presentationFormat)) }
        }
        return nil
    }
}
