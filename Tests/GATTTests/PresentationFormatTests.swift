import BluetoothCore
import GATT
import Testing

@Suite struct PresentationFormatTests {
    private func format(_ code: PresentationFormatCode, exponent: Int8 = 0, unit: UInt16 = 0x2700) -> CharacteristicPresentationFormat {
        CharacteristicPresentationFormat(format: code, exponent: exponent, unit: BluetoothUUID(unit))
    }

    @Test func decodesTheDescriptor() throws {
        // sint16, exponent -2, degree Celsius, SIG namespace, description "left" (0x010D).
        let descriptor = try CharacteristicPresentationFormat(bytes: [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x0D, 0x01])
        #expect(descriptor.format == .sint16)
        #expect(descriptor.exponent == -2)
        #expect(descriptor.unit == BluetoothUUID(UInt16(0x272F)))
        #expect(descriptor.unitName == "Celsius temperature (degree Celsius)")
        #expect(descriptor.unitSymbol == "°C")
        #expect(descriptor.namespaceDescriptionName == "left")
        #expect(descriptor.bytes == [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x0D, 0x01])
        for count in [0, 1, 6] {
            #expect(throws: DecodeError.self) { try CharacteristicPresentationFormat(bytes: Array(descriptor.bytes.prefix(count))) }
        }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try CharacteristicPresentationFormat(bytes: descriptor.bytes + [0]) }
    }

    @Test func namesEveryFormatCode() {
        let expected = [
            "boolean", "2bit", "nibble", "uint8", "uint12", "uint16", "uint24", "uint32", "uint48",
            "uint64", "uint128", "sint8", "sint12", "sint16", "sint24", "sint32", "sint48", "sint64",
            "sint128", "float32", "float64", "medfloat16", "medfloat32", "uint16[2]", "utf8s",
            "utf16s", "struct", "medASN1",
        ]
        for (offset, name) in expected.enumerated() {
            #expect(PresentationFormatCode(rawValue: UInt8(offset + 1)).name == name)
        }
        #expect(PresentationFormatCode(rawValue: 0).name == nil)
        #expect(PresentationFormatCode(rawValue: 0x1D).description == "reserved (0x1D)")
    }

    @Test(arguments: [
        // (format, exponent, unit, bytes, shown)
        (PresentationFormatCode.sint16, Int8(-2), UInt16(0x272F), [0x29, 0x09] as [UInt8], "23.45 °C"),
        (.sint16, -2, 0x272F, [0xFB, 0xFF], "-0.05 °C"),
        (.sint16, 0, 0x2700, [0x00, 0x80], "-32768"),
        (.uint8, 0, 0x27AD, [0x2A], "42 %"),
        (.uint8, 3, 0x2701, [0x05], "5000 m"),
        (.uint8, 3, 0x2701, [0x00], "0 m"),
        (.uint16, -1, 0x2724, [0xE8, 0x03], "100.0 Pa"),
        (.uint24, 0, 0x2700, [0xFF, 0xFF, 0xFF], "16777215"),
        (.sint24, 0, 0x2700, [0xFF, 0xFF, 0xFF], "-1"),
        (.uint32, -3, 0x2728, [0x39, 0x30, 0x00, 0x00], "12.345 V"),
        (.sint32, 0, 0x2700, [0x00, 0x00, 0x00, 0x80], "-2147483648"),
        (.uint48, 0, 0x2700, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "281474976710655"),
        (.sint48, 0, 0x2700, [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "-2"),
        (.uint64, 0, 0x2700, [UInt8](repeating: 0xFF, count: 8), "18446744073709551615"),
        (.sint64, -1, 0x2700, [0xF6, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "-1.0"),
        (.uint128, 0, 0x2700, [UInt8](repeating: 0xFF, count: 16), "340282366920938463463374607431768211455"),
        (.sint128, 0, 0x2700, [UInt8](repeating: 0, count: 15) + [0x80], "-170141183460469231731687303715884105728"),
        (.sint8, -3, 0x2700, [0x80], "-0.128"),
        (.uint12, 0, 0x2700, [0xFF, 0x0F], "4095"),
        (.sint12, 0, 0x2700, [0xFF, 0x0F], "-1"),
        (.sint12, 0, 0x2700, [0xFF, 0x07], "2047"),
        (.uint2, 0, 0x2700, [0x03], "3"),
        (.nibble, 0, 0x2700, [0x0F], "15"),
        (.boolean, 0, 0x2700, [0x01], "true"),
        (.boolean, 0, 0x2700, [0x00], "false"),
        (.float32, 0, 0x272F, [0x00, 0x00, 0xBC, 0x41], "23.5 °C"),
        (.float64, 0, 0x2700, [0, 0, 0, 0, 0, 0, 0xF8, 0x3F], "1.5"),
        // Exponent applies to integers only.
        (.float32, -2, 0x2700, [0x00, 0x00, 0xC0, 0x3F], "1.5"),
        // SFLOAT 0xF16E: exponent -1, mantissa 0x16E = 366 -> 36.6.
        (.medfloat16, 0, 0x272F, [0x6E, 0xF1], "36.6 °C"),
        (.medfloat16, 0, 0x2700, [0xFF, 0x07], "NaN"),
        (.medfloat16, 0, 0x2700, [0x00, 0x08], "NRes"),
        (.medfloat16, 0, 0x2700, [0xFE, 0x07], "+INFINITY"),
        (.medfloat16, 0, 0x2700, [0x02, 0x08], "-INFINITY"),
        // FLOAT 0xFE00_3A98: exponent -2, mantissa 15000 -> 150.00.
        (.medfloat32, 0, 0x2781, [0x98, 0x3A, 0x00, 0xFE], "150.00 mmHg"),
        (.medfloat32, 0, 0x2700, [0xFF, 0xFF, 0xFF, 0x00], "-1"),
        (.uint16x2, 0, 0x2700, [0x01, 0x00, 0x02, 0x00], "1, 2"),
        (.utf8s, 0, 0x2700, Array("héllo".utf8), "\"héllo\""),
        (.utf16s, 0, 0x2700, [0x68, 0x00, 0x69, 0x00, 0x00, 0x00], "\"hi\""),
        (.struct, 0, 0x2700, [0x01, 0xAB], "hex 01AB"),
        (PresentationFormatCode(rawValue: 0x30), 0, 0x2700, [0x01], "hex 01"),
        // A unit without a symbol prints its SIG name.
        (.uint8, 0, 0x2730, [0x07], "7 luminous flux (lumen)"),
        (.uint8, 0, 0x27FF, [0x07], "7 unit 27FF"),
    ] as [(PresentationFormatCode, Int8, UInt16, [UInt8], String)])
    func formatsValues(_ code: PresentationFormatCode, _ exponent: Int8, _ unit: UInt16, _ bytes: [UInt8], _ shown: String) throws {
        let value = try FormattedValue(bytes: bytes, format: format(code, exponent: exponent, unit: unit))
        #expect(value.description == shown)
    }

    @Test func keepsLargeExponentsExact() throws {
        let value = try FormattedValue(bytes: [0x01], format: format(.uint8, exponent: -128))
        #expect(value.numberText == "0." + String(repeating: "0", count: 127) + "1")
        let big = try FormattedValue(bytes: [0x01], format: format(.sint8, exponent: 127))
        #expect(big.numberText == "1" + String(repeating: "0", count: 127))
    }

    @Test func rejectsWrongWidthsAndOutOfRangeBits() {
        let cases: [(PresentationFormatCode, [UInt8], DecodeError)] = [
            (.uint16, [0x01], .truncated(needed: 2, available: 1)),
            (.uint16, [0x01, 0x02, 0x03], .trailingBytes(count: 1)),
            (.uint128, [UInt8](repeating: 0, count: 15), .truncated(needed: 8, available: 7)),
            (.float32, [], .truncated(needed: 4, available: 0)),
            (.medfloat16, [0x01], .truncated(needed: 2, available: 1)),
            (.boolean, [0x02], .invalidValue(field: "boolean value", value: 2)),
            (.uint2, [0x04], .invalidValue(field: "2bit value", value: 4)),
            (.nibble, [0x10], .invalidValue(field: "nibble value", value: 16)),
            (.uint12, [0x00, 0x10], .invalidValue(field: "uint12 value", value: 0x1000)),
            (.utf16s, [0x68], .trailingBytes(count: 1)),
        ]
        for (code, bytes, error) in cases {
            #expect(throws: error, "\(code)") { try FormattedValue(bytes: bytes, format: format(code)) }
        }
    }

    @Test func decodesMedicalFloatsDirectly() {
        #expect(MedicalFloat(sfloat: 0x0801) == .reserved)
        #expect(MedicalFloat(float: 0x0080_0001) == .reserved)
        #expect(MedicalFloat(sfloat: 0x0FFF) == .value(mantissa: -1, exponent: 0))
        #expect(MedicalFloat(sfloat: 0x7001).description == "10000000")
        #expect(MedicalFloat(sfloat: 0x8001).description == "0.00000001")
    }
}
