import BluetoothCore

/// Eddystone-TLM (frame type 0x20): the beacon's health, sent interleaved with a UID, URL
/// or EID frame from the same address. Version 0x00 is plain; version 0x01 is encrypted
/// with the EID key and is kept as received, since only the key's owner can read it.
public enum EddystoneTLM: Sendable, Hashable, CustomStringConvertible {
    public static let frameType: UInt8 = 0x20

    case plain(Telemetry)
    /// ETLM: 12 octets of encrypted telemetry, a 2-octet salt and a 2-octet MIC.
    case encrypted(encryptedTelemetry: [UInt8], salt: UInt16, messageIntegrityCheck: UInt16)

    /// The unencrypted telemetry fields, big-endian on the air.
    public struct Telemetry: Sendable, Hashable {
        /// Battery voltage in mV; 0 when the beacon is mains powered or cannot measure it.
        public var batteryVoltage: UInt16
        /// Beacon temperature as signed 8.8 fixed point (°C × 256); 0x8000 means "not
        /// supported".
        public var temperatureRaw: UInt16
        /// Advertising PDUs sent since power-on or reboot.
        public var advertisingPDUCount: UInt32
        /// Time since power-on or reboot in 0.1 s units.
        public var timeSincePowerOn: UInt32

        public static let temperatureUnsupported: UInt16 = 0x8000

        public init(batteryVoltage: UInt16, temperatureRaw: UInt16, advertisingPDUCount: UInt32, timeSincePowerOn: UInt32) {
            self.batteryVoltage = batteryVoltage
            self.temperatureRaw = temperatureRaw
            self.advertisingPDUCount = advertisingPDUCount
            self.timeSincePowerOn = timeSincePowerOn
        }

        /// From degrees Celsius (nil = not supported), rounded to 1/256 °C and clamped to
        /// the representable -127.996...127.996.
        public init(batteryVoltage: UInt16, temperature: Double?, advertisingPDUCount: UInt32, timeSincePowerOn: UInt32) {
            let raw: UInt16
            if let temperature {
                let scaled = (temperature * 256).rounded()
                let clamped = Swift.max(-32767, Swift.min(32767, scaled))
                raw = UInt16(bitPattern: Int16(clamped))
            } else {
                raw = Self.temperatureUnsupported
            }
            self.init(batteryVoltage: batteryVoltage, temperatureRaw: raw, advertisingPDUCount: advertisingPDUCount, timeSincePowerOn: timeSincePowerOn)
        }

        /// Degrees Celsius, or nil when the beacon says it has no sensor.
        public var temperature: Double? {
            temperatureRaw == Self.temperatureUnsupported ? nil : Double(Int16(bitPattern: temperatureRaw)) / 256
        }

        /// Seconds since power-on.
        public var secondsSincePowerOn: Double { Double(timeSincePowerOn) / 10 }
    }

    public var frameBytes: [UInt8] {
        switch self {
        case let .plain(t):
            return [Self.frameType, 0x00] + BigEndian.bytes(t.batteryVoltage) + BigEndian.bytes(t.temperatureRaw)
                + BigEndian.bytes(t.advertisingPDUCount) + BigEndian.bytes(t.timeSincePowerOn)
        case let .encrypted(telemetry, salt, mic):
            return [Self.frameType, 0x01] + telemetry + BigEndian.bytes(salt) + BigEndian.bytes(mic)
        }
    }

    static func decode(frame data: [UInt8]) -> BeaconDecoding<EddystoneTLM> {
        guard data.count >= 2 else {
            return .malformed(.wrongLength(frame: "Eddystone-TLM", expected: 14...18, actual: data.count))
        }
        let slice = data[...]
        switch data[1] {
        case 0x00:
            guard data.count == 14 else {
                return .malformed(.wrongLength(frame: "Eddystone-TLM", expected: 14...14, actual: data.count))
            }
            return .frame(.plain(Telemetry(
                batteryVoltage: BigEndian.uint16(slice, at: 2),
                temperatureRaw: BigEndian.uint16(slice, at: 4),
                advertisingPDUCount: BigEndian.uint32(slice, at: 6),
                timeSincePowerOn: BigEndian.uint32(slice, at: 10)
            )))
        case 0x01:
            guard data.count == 18 else {
                return .malformed(.wrongLength(frame: "Eddystone-ETLM", expected: 18...18, actual: data.count))
            }
            return .frame(.encrypted(
                encryptedTelemetry: Array(data[2..<14]),
                salt: BigEndian.uint16(slice, at: 14),
                messageIntegrityCheck: BigEndian.uint16(slice, at: 16)
            ))
        default:
            return .malformed(.unknownTLMVersion(data[1]))
        }
    }

    public var description: String {
        switch self {
        case let .plain(t):
            let temperature = t.temperature.map { "\($0) °C" } ?? "no sensor"
            return "Eddystone-TLM battery \(t.batteryVoltage) mV, \(temperature), \(t.advertisingPDUCount) PDUs, \(t.secondsSincePowerOn) s"
        case let .encrypted(telemetry, salt, mic):
            return "Eddystone-ETLM \(Hex.string(telemetry)) salt \(salt) MIC \(mic)"
        }
    }
}
