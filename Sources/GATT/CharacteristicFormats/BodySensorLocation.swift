import BluetoothCore

/// The Body Sensor Location characteristic (0x2A38, Heart Rate Service 3.2): where a
/// heart rate sensor is worn.
public enum BodySensorLocation: Hashable, Sendable, CustomStringConvertible {
    case other, chest, wrist, finger, hand, earLobe, foot
    /// 7 to 255 are reserved for future use: kept, so a newer sensor still decodes.
    case reserved(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .reserved(rawValue)
        }
    }

    /// Exactly one byte.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let value = try reader.readUInt8()
        try reader.expectEnd()
        self.init(rawValue: value)
    }

    public var rawValue: UInt8 {
        switch self {
        case .other: 0
        case .chest: 1
        case .wrist: 2
        case .finger: 3
        case .hand: 4
        case .earLobe: 5
        case .foot: 6
        case .reserved(let value): value
        }
    }

    public var description: String {
        switch self {
        case .other: "Other"
        case .chest: "Chest"
        case .wrist: "Wrist"
        case .finger: "Finger"
        case .hand: "Hand"
        case .earLobe: "Ear Lobe"
        case .foot: "Foot"
        case .reserved(let value): "Reserved (0x\(hex8(value)))"
        }
    }
}
