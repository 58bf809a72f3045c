/// A Bluetooth UUID: 16-, 32- or 128-bit (Core Vol 3 Part B 2.5.1).
///
/// Short forms are aliases inside the Bluetooth Base UUID
/// 00000000-0000-1000-8000-00805F9B34FB. Equality compares the full 128-bit value, so
/// `"180D"` equals `"0000180D-0000-1000-8000-00805F9B34FB"`, as in CoreBluetooth's CBUUID.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 128-bit value, most significant half first.
    public let high: UInt64
    public let low: UInt64

    static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init(_ short: UInt16) { self.init(UInt32(short)) }

    public init(_ short: UInt32) {
        self.init(high: UInt64(short) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// From 2, 4 or 16 bytes, least significant first, as ATT and advertising data carry it.
    public init(littleEndian bytes: [UInt8]) throws(DecodeError) {
        var reader = ByteReader(bytes)
        switch bytes.count {
        case 2: self.init(try reader.readUInt16())
        case 4: self.init(try reader.readUInt32())
        case 16:
            let low = try reader.readUInt64()
            self.init(high: try reader.readUInt64(), low: low)
        default: throw .invalidValue(field: "UUID length", value: bytes.count)
        }
    }

    /// Parses "180D", "0000180D" or "0000180D-0000-1000-8000-00805F9B34FB" (any case;
    /// dashes optional in the 128-bit form).
    /// Any other text, including non-ASCII digits, is nil.
    public init?(_ text: String) {
        let digits = text.filter { $0 != "-" }
        // ASCII only: `Character.isHexDigit` also admits fullwidth forms ("１８０Ｄ"), which
        // integer parsing then rejects.
        guard digits.unicodeScalars.allSatisfy(\.properties.isASCIIHexDigit) else { return nil }
        switch digits.unicodeScalars.count {
        case 4:
            guard let value = UInt16(digits, radix: 16) else { return nil }
            self.init(value)
        case 8:
            guard let value = UInt32(digits, radix: 16) else { return nil }
            self.init(value)
        case 32:
            if text.contains("-") {
                let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
                guard groups == [8, 4, 4, 4, 12] else { return nil }
            }
            guard let high = UInt64(digits.prefix(16), radix: 16), let low = UInt64(digits.suffix(16), radix: 16) else { return nil }
            self.init(high: high, low: low)
        default: return nil
        }
    }

    /// The 16- or 32-bit alias when this UUID lies in the Bluetooth Base UUID range.
    public var shortValue: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The smallest encoding: 2, 4 or 16 bytes.
    public var byteWidth: Int {
        guard let short = shortValue else { return 16 }
        return short <= 0xFFFF ? 2 : 4
    }

    /// The smallest encoding, least significant byte first.
    public var littleEndianBytes: [UInt8] {
        var writer = ByteWriter(capacity: 16)
        switch byteWidth {
        case 2: writer.write(UInt16(truncatingIfNeeded: shortValue!))
        case 4: writer.write(shortValue!)
        default:
            writer.write(low)
            writer.write(high)
        }
        return writer.bytes
    }

    /// The full 128-bit form, least significant byte first.
    public var littleEndianBytes128: [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.write(low)
        writer.write(high)
        return writer.bytes
    }

    /// The form ATT carries (Core 5.4 Vol 3 Part F 3.2.1): the 16-bit alias when there is
    /// one, else the full 128 bits; a 32-bit alias goes as 128 bits. Least significant byte
    /// first.
    public var attributeBytes: [UInt8] {
        byteWidth == 2 ? littleEndianBytes : littleEndianBytes128
    }

    /// "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", upper case.
    public var uuidString128: String {
        var text: [UInt8] = []
        appendText128(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// CoreBluetooth's form: "180D" for 16-bit, "0000180D"-style for 32-bit, else 128-bit.
    public var description: String {
        var text: [UInt8] = []
        appendDescription(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends ``description`` as ASCII bytes, with no String in between: for output built
    /// as bytes (a tool's JSON lines).
    public func appendDescription(to out: inout [UInt8]) {
        switch byteWidth {
        case 2: Hex.append(high >> 32, digits: 4, to: &out)
        case 4: Hex.append(high >> 32, digits: 8, to: &out)
        default: appendText128(to: &out)
        }
    }

    private func appendText128(to out: inout [UInt8]) {
        Hex.append(high >> 32, digits: 8, to: &out)
        out.append(UInt8(ascii: "-"))
        Hex.append(high >> 16, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Hex.append(high, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Hex.append(low >> 48, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Hex.append(low, digits: 12, to: &out)
    }
}
