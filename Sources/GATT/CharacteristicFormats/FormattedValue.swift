import BluetoothCore

/// A characteristic value read by its Characteristic Presentation Format descriptor: the
/// fallback for characteristics without a decoder of their own, as LightBlue shows them.
public struct FormattedValue: Hashable, Sendable, CustomStringConvertible {
    public enum Value: Hashable, Sendable {
        case boolean(Bool)
        /// Unsigned integer formats, before the exponent is applied. (uint128 does not fit
        /// an Int128, so signed and unsigned are kept apart.)
        case unsigned(UInt128)
        /// Signed integer formats, before the exponent is applied.
        case signed(Int128)
        case float(Double)
        case medicalFloat(MedicalFloat)
        case text(String)
        /// uint16[2], an IEEE 11073-20601 nomenclature code.
        case uint16Pair(UInt16, UInt16)
        /// struct, medASN1 and reserved formats: shown as hex.
        case opaque([UInt8])
    }

    public let value: Value
    public let format: CharacteristicPresentationFormat

    /// Reads `bytes` as `format` says. Fixed-size formats need exactly their width
    /// (``DecodeError/truncated(needed:available:)`` short, ``DecodeError/trailingBytes(count:)``
    /// long); boolean, 2bit, nibble and uint12 reject bits beyond their range with
    /// ``DecodeError/invalidValue(field:value:)``; text never fails.
    public init(bytes: [UInt8], format: CharacteristicPresentationFormat) throws(DecodeError) {
        self.format = format
        var reader = ByteReader(bytes)
        let code = format.format
        if let layout = code.integerLayout {
            let raw = try Self.readUnsigned(&reader, width: layout.width)
            try reader.expectEnd()
            if layout.bits < 8 * layout.width, !layout.signed, raw >> UInt128(layout.bits) != 0 {
                throw .invalidValue(field: "\(code) value", value: Int(truncatingIfNeeded: raw))
            }
            if layout.signed {
                // Sign-extend from the top significant bit (bit 11 for sint12).
                let shift = 128 - layout.bits
                value = .signed(Int128(bitPattern: raw << UInt128(shift)) >> Int128(shift))
            } else {
                value = .unsigned(raw)
            }
            return
        }
        switch code {
        case .boolean:
            let raw = try reader.readUInt8()
            try reader.expectEnd()
            guard raw <= 1 else { throw .invalidValue(field: "boolean value", value: Int(raw)) }
            value = .boolean(raw == 1)
        case .float32:
            let raw = try reader.readUInt32()
            try reader.expectEnd()
            value = .float(Double(Float(bitPattern: raw)))
        case .float64:
            let raw = try reader.readUInt64()
            try reader.expectEnd()
            value = .float(Double(bitPattern: raw))
        case .medfloat16:
            let raw = try reader.readUInt16()
            try reader.expectEnd()
            value = .medicalFloat(MedicalFloat(sfloat: raw))
        case .medfloat32:
            let raw = try reader.readUInt32()
            try reader.expectEnd()
            value = .medicalFloat(MedicalFloat(float: raw))
        case .uint16x2:
            let first = try reader.readUInt16()
            let second = try reader.readUInt16()
            try reader.expectEnd()
            value = .uint16Pair(first, second)
        case .utf8s:
            value = .text(GATTString.decode(bytes))
        case .utf16s:
            guard bytes.count % 2 == 0 else { throw .trailingBytes(count: 1) }
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            while !reader.isAtEnd { units.append(try reader.readUInt16()) }
            while units.last == 0 { units.removeLast() }
            value = .text(String(decoding: units, as: UTF16.self))
        default:
            value = .opaque(bytes)
        }
    }

    /// The number as text with the exponent applied, exactly ("23.45"); nil for text and
    /// opaque values.
    public var numberText: String? {
        switch value {
        case .boolean(let flag): flag ? "true" : "false"
        case .unsigned(let integer): decimalText(negative: false, magnitude: integer, exponent: Int(format.exponent))
        case .signed(let integer): decimalText(mantissa: integer, exponent: Int(format.exponent))
        case .float(let number): "\(number)"
        case .medicalFloat(let number): number.description
        case let .uint16Pair(first, second): "\(first), \(second)"
        case .text, .opaque: nil
        }
    }

    /// "23.45 °C", "42 %", "\"hello\"", "hex 0102".
    public var description: String {
        switch value {
        case .text(let text): return "\"\(text)\""
        case .opaque(let bytes): return "hex \(Hex.string(bytes))"
        case .boolean: return numberText ?? ""
        default:
            guard format.unit != CharacteristicPresentationFormat.unitless else { return numberText ?? "" }
            let unit = format.unitSymbol ?? format.unitName ?? "unit \(format.unit)"
            return "\(numberText ?? "") \(unit)"
        }
    }

    private static func readUnsigned(_ reader: inout ByteReader, width: Int) throws(DecodeError) -> UInt128 {
        if width <= 8 { return UInt128(try reader.readLittleEndian(width: width)) }
        let low = try reader.readUInt64()
        let high = try reader.readLittleEndian(width: width - 8)
        return UInt128(high) << 64 | UInt128(low)
    }
}
