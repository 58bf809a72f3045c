import BluetoothCore

/// The Battery Level characteristic (0x2A19, Battery Service; GATT Specification
/// Supplement): the charge as a percentage, one byte.
public struct BatteryLevel: Hashable, Sendable, CustomStringConvertible {
    /// 0 to 100.
    public let percentage: UInt8

    public init?(percentage: UInt8) {
        guard percentage <= 100 else { return nil }
        self.percentage = percentage
    }

    /// Exactly one byte, 0 to 100. The Supplement prohibits 101 to 255, so those are an
    /// ``DecodeError/invalidValue(field:value:)`` rather than a percentage above 100.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let value = try reader.readUInt8()
        try reader.expectEnd()
        guard value <= 100 else { throw .invalidValue(field: "Battery Level", value: Int(value)) }
        percentage = value
    }

    public var bytes: [UInt8] { [percentage] }

    public var description: String { "\(percentage)%" }
}
