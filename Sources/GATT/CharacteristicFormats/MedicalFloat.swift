import BluetoothCore

/// An IEEE 11073-20601 SFLOAT (16 bits: 4-bit exponent, 12-bit mantissa) or FLOAT (32 bits:
/// 8-bit exponent, 24-bit mantissa), both two's complement, value = mantissa x 10^exponent.
/// Health profiles (thermometer, blood pressure, glucose) send these.
public enum MedicalFloat: Hashable, Sendable, CustomStringConvertible {
    case value(mantissa: Int32, exponent: Int8)
    case notANumber
    case notAtThisResolution
    case positiveInfinity
    case negativeInfinity
    /// The one reserved special value.
    case reserved

    /// From the 16 bits of an SFLOAT. The special values are mantissas with exponent 0.
    public init(sfloat raw: UInt16) {
        switch raw {
        case 0x07FF: self = .notANumber
        case 0x0800: self = .notAtThisResolution
        case 0x07FE: self = .positiveInfinity
        case 0x0802: self = .negativeInfinity
        case 0x0801: self = .reserved
        default:
            let mantissa = Int32(Int16(bitPattern: raw << 4) >> 4)
            let exponent = Int8(bitPattern: UInt8(raw >> 12) << 4) >> 4
            self = .value(mantissa: mantissa, exponent: exponent)
        }
    }

    /// From the 32 bits of a FLOAT.
    public init(float raw: UInt32) {
        switch raw {
        case 0x007F_FFFF: self = .notANumber
        case 0x0080_0000: self = .notAtThisResolution
        case 0x007F_FFFE: self = .positiveInfinity
        case 0x0080_0002: self = .negativeInfinity
        case 0x0080_0001: self = .reserved
        default:
            let mantissa = Int32(bitPattern: raw << 8) >> 8
            let exponent = Int8(bitPattern: UInt8(raw >> 24))
            self = .value(mantissa: mantissa, exponent: exponent)
        }
    }

    /// "36.6", "NaN", "NRes", "+INFINITY", "-INFINITY", "reserved".
    public var description: String {
        switch self {
        case let .value(mantissa, exponent): decimalText(mantissa: Int128(mantissa), exponent: Int(exponent))
        case .notANumber: "NaN"
        case .notAtThisResolution: "NRes"
        case .positiveInfinity: "+INFINITY"
        case .negativeInfinity: "-INFINITY"
        case .reserved: "reserved"
        }
    }
}
