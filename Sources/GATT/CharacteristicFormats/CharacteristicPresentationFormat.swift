import BluetoothCore

/// The Characteristic Presentation Format descriptor (0x2904, Core Vol 3 Part G 3.3.3.5):
/// how to read and show the characteristic value: format, power-of-ten exponent, unit.
public struct CharacteristicPresentationFormat: Hashable, Sendable, CustomStringConvertible {
    public var format: PresentationFormatCode
    /// The shown value is the integer x 10^exponent (integer formats only).
    public var exponent: Int8
    /// A unit UUID from Assigned Numbers 3.5 (0x2700 is unitless).
    public var unit: BluetoothUUID
    /// 0x01 is the Bluetooth SIG; other values are reserved.
    public var namespace: UInt8
    /// Within the SIG namespace, which of several like values this is (Assigned Numbers
    /// 2.4.2): "first", "left", "internal"...
    public var namespaceDescription: UInt16

    public static let bluetoothSIGNamespace: UInt8 = 0x01
    public static let unitless = BluetoothUUID(UInt16(0x2700))

    public init(
        format: PresentationFormatCode, exponent: Int8 = 0, unit: BluetoothUUID = unitless,
        namespace: UInt8 = bluetoothSIGNamespace, namespaceDescription: UInt16 = 0
    ) {
        self.format = format
        self.exponent = exponent
        self.unit = unit
        self.namespace = namespace
        self.namespaceDescription = namespaceDescription
    }

    /// Exactly seven bytes. Reserved format codes and namespaces are kept (the value is then
    /// shown as bytes) rather than rejected.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let format = PresentationFormatCode(rawValue: try reader.readUInt8())
        let exponent = try reader.readInt8()
        let unit = BluetoothUUID(try reader.readUInt16())
        let namespace = try reader.readUInt8()
        let description = try reader.readUInt16()
        try reader.expectEnd()
        self.init(format: format, exponent: exponent, unit: unit, namespace: namespace, namespaceDescription: description)
    }

    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 7)
        writer.write(format.rawValue)
        writer.write(exponent)
        writer.write(UInt16(truncatingIfNeeded: unit.shortValue ?? 0))
        writer.write(namespace)
        writer.write(namespaceDescription)
        return writer.bytes
    }

    /// The unit's SIG name ("percentage"), nil when unknown.
    public var unitName: String? { GATTNames.unit(for: unit) }

    /// A short symbol for common units ("%", "°C"), nil for the rest.
    public var unitSymbol: String? {
        guard let short = unit.shortValue, short <= 0xFFFF else { return nil }
        return Self.unitSymbols[UInt16(short)]
    }

    /// The namespace description's name in the SIG namespace ("first", "left"), nil else.
    public var namespaceDescriptionName: String? {
        guard namespace == Self.bluetoothSIGNamespace else { return nil }
        switch namespaceDescription {
        case 0: return "unknown"
        case 1...0xFF: return "#\(namespaceDescription)"
        case 0x100...0x110: return Self.locationNames[Int(namespaceDescription - 0x100)]
        default: return nil
        }
    }

    /// "sint16, exponent -2, unit Celsius temperature (degree Celsius), namespace Bluetooth SIG, description unknown".
    public var description: String {
        var parts = ["\(format)"]
        if exponent != 0 { parts.append("exponent \(exponent)") }
        parts.append("unit " + (unitName ?? unit.description))
        parts.append(namespace == Self.bluetoothSIGNamespace ? "namespace Bluetooth SIG" : "namespace 0x\(hex8(namespace))")
        parts.append("description " + (namespaceDescriptionName ?? "0x\(hex16(namespaceDescription))"))
        return parts.joined(separator: ", ")
    }

    // Assigned Numbers 2.4.2, GATT Namespace Descriptors, 0x0100 to 0x0110.
    private static let locationNames = [
        "front", "back", "top", "bottom", "upper", "lower", "main", "backup", "auxiliary",
        "supplementary", "flash", "inside", "outside", "left", "right", "internal", "external",
    ]

    // Symbols for the units an explorer meets most; the rest print their SIG name.
    private static let unitSymbols: [UInt16: String] = [
        0x2701: "m", 0x2702: "kg", 0x2703: "s", 0x2704: "A", 0x2705: "K", 0x2712: "m/s",
        0x2713: "m/s²", 0x2722: "Hz", 0x2723: "N", 0x2724: "Pa", 0x2725: "J", 0x2726: "W",
        0x2727: "C", 0x2728: "V", 0x2729: "F", 0x272A: "Ω", 0x272F: "°C", 0x2731: "lx",
        0x2760: "min", 0x2761: "h", 0x2762: "d", 0x2763: "°", 0x2767: "L", 0x2780: "bar",
        0x2781: "mmHg", 0x27A6: "km/h", 0x27A8: "rpm", 0x27AB: "kWh", 0x27AC: "°F",
        0x27AD: "%", 0x27AE: "‰", 0x27AF: "bpm", 0x27B0: "Ah", 0x27C3: "dB", 0x27C4: "ppm",
        0x27C5: "ppb",
    ]
}
