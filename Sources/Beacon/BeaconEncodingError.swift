import BluetoothCore

/// Why a beacon could not be built from what was given. Each case says what to change.
public enum BeaconEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The proximity UUID text is not 32 hex digits (dashes allowed as 8-4-4-4-12).
    case invalidProximityUUID(String)
    /// A major or minor value outside 0...65535.
    case valueOutOfRange(field: String, value: Int, allowed: ClosedRange<Int>)
    /// A calibrated power (iBeacon measured power, Eddystone TX power, AltBeacon reference
    /// RSSI) outside -127...20 dBm, which no real radio transmits and receivers treat as
    /// corrupt.
    case powerOutOfRange(field: String, dBm: Int)
    /// An identifier field with the wrong number of bytes.
    case wrongIdentifierLength(field: String, expected: Int, actual: Int)
    /// The URL does not start with one of the four schemes Eddystone-URL can carry.
    case unknownURLScheme(String)
    /// The URL contains a character Eddystone-URL cannot carry (only printable ASCII).
    case unencodableURLCharacter(Character, url: String)
    /// The URL encodes to `encodedLength` bytes after its scheme; Eddystone-URL carries 17.
    case urlTooLong(String, encodedLength: Int)
    /// The advertising data builder refused the structures (they overflowed the limit).
    case advertisingData(AdvertisingDataError)

    public var description: String {
        switch self {
        case let .invalidProximityUUID(text):
            return "proximity UUID \"\(text)\" is not 32 hex digits; write it as XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX"
        case let .valueOutOfRange(field, value, allowed):
            return "\(field) \(value) is outside \(allowed.lowerBound)...\(allowed.upperBound)"
        case let .powerOutOfRange(field, dBm):
            return "\(field) \(dBm) dBm is outside -127...20 dBm; calibrate it (typically -59 at 1 m, -18 at 0 m)"
        case let .wrongIdentifierLength(field, expected, actual):
            return "\(field) has \(actual) bytes; it must have exactly \(expected)"
        case let .unknownURLScheme(url):
            return "\"\(url)\" must start with http://www., https://www., http:// or https://"
        case let .unencodableURLCharacter(character, url):
            return "\"\(url)\" contains \"\(character)\", which Eddystone-URL cannot carry; percent-encode it"
        case let .urlTooLong(url, length):
            return "\"\(url)\" encodes to \(length) bytes after the scheme, \(length - EddystoneURL.maximumEncodedLength) too many for Eddystone-URL's \(EddystoneURL.maximumEncodedLength); use a URL shortener"
        case let .advertisingData(error):
            return "advertising data: \(error)"
        }
    }
}

/// Checks a calibrated power value before it is put on the air.
func checkedPower(_ dBm: Int, field: String) throws(BeaconEncodingError) -> Int8 {
    guard (-127...20).contains(dBm) else { throw .powerOutOfRange(field: field, dBm: dBm) }
    return Int8(dBm)
}

/// Builds advertising data, turning the builder's error into ours.
func buildAdvertisingData(_ fill: (inout AdvertisingDataBuilder) -> Void) throws(BeaconEncodingError) -> AdvertisingData {
    var builder = AdvertisingDataBuilder()
    fill(&builder)
    do {
        return try builder.build()
    } catch {
        throw .advertisingData(error)
    }
}

/// Beacon formats put multi-octet fields big-endian, unlike the rest of Bluetooth.
enum BigEndian {
    static func uint16(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt16 {
        let start = bytes.startIndex + offset
        return UInt16(bytes[start]) << 8 | UInt16(bytes[start + 1])
    }

    static func uint32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
        let start = bytes.startIndex + offset
        return (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[start + $1]) }
    }

    static func bytes(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    static func bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// The 16 octets of a 128-bit UUID in the order it is printed.
    static func bytes(_ uuid: BluetoothUUID) -> [UInt8] {
        (0..<8).map { UInt8((uuid.high >> (56 - 8 * UInt64($0))) & 0xFF) }
            + (0..<8).map { UInt8((uuid.low >> (56 - 8 * UInt64($0))) & 0xFF) }
    }

    static func uuid(_ bytes: ArraySlice<UInt8>, at offset: Int) -> BluetoothUUID {
        let start = bytes.startIndex + offset
        let high = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[start + $1]) }
        let low = (8..<16).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[start + $1]) }
        return BluetoothUUID(high: high, low: low)
    }
}
