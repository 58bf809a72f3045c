import BluetoothCore

/// What a beacon decoder made of some advertising data.
///
/// Two kinds of "no" are kept apart because they mean different things to a user: most
/// advertisements are simply some other format (a phone's Continuity message, a heart-rate
/// sensor), and that is not worth a word; but bytes that carry a format's signature (Apple's
/// iBeacon type octet, the 0xFEAA service, the 0xBEAC code) and then break its layout are a
/// misbehaving transmitter, which a researcher wants to see. Neither is ever a match.
public enum BeaconDecoding<Frame: Sendable & Hashable>: Sendable, Hashable {
    /// The data carries this format and it is well formed.
    case frame(Frame)
    /// The data does not claim to be this format.
    case notThisFormat
    /// The data carries this format's signature but breaks its layout.
    case malformed(BeaconMalformation)

    /// The frame, or nil for both kinds of "no".
    public var frame: Frame? {
        if case let .frame(frame) = self { return frame }
        return nil
    }

    /// Why the data is malformed, or nil.
    public var malformation: BeaconMalformation? {
        if case let .malformed(reason) = self { return reason }
        return nil
    }
}

/// How bytes that carry a beacon format's signature break that format's layout.
public enum BeaconMalformation: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frame (or an internal length octet) has a length outside what the format allows.
    case wrongLength(frame: String, expected: ClosedRange<Int>, actual: Int)
    /// Eddystone service data whose frame type octet is not UID, URL, TLM or EID.
    case unknownEddystoneFrameType(UInt8)
    /// An Eddystone service data structure with no 0xFEAA in any 16-bit service UUID list;
    /// the Eddystone specification requires both.
    case missingEddystoneServiceUUID
    /// An Eddystone-URL scheme prefix code above 0x03.
    case unknownURLScheme(UInt8)
    /// An Eddystone-URL octet that is neither an expansion code nor printable ASCII.
    case invalidURLByte(UInt8, offset: Int)
    /// An Eddystone-TLM version other than 0x00 (plain) or 0x01 (encrypted).
    case unknownTLMVersion(UInt8)

    public var description: String {
        switch self {
        case let .wrongLength(frame, expected, actual):
            let range = expected.lowerBound == expected.upperBound ? "\(expected.lowerBound)" : "\(expected.lowerBound)...\(expected.upperBound)"
            return "\(frame): \(actual) bytes where the format has \(range)"
        case let .unknownEddystoneFrameType(type):
            return "Eddystone frame type 0x\(Hex.string([type])) is not UID (0x00), URL (0x10), TLM (0x20) or EID (0x30)"
        case .missingEddystoneServiceUUID:
            return "Eddystone service data without 0xFEAA in a 16-bit service UUID list"
        case let .unknownURLScheme(code):
            return "Eddystone-URL scheme code 0x\(Hex.string([code])) is not 0x00...0x03"
        case let .invalidURLByte(byte, offset):
            return "Eddystone-URL byte 0x\(Hex.string([byte])) at offset \(offset) is neither an expansion code nor printable ASCII"
        case let .unknownTLMVersion(version):
            return "Eddystone-TLM version 0x\(Hex.string([version])) is not 0x00 (plain) or 0x01 (encrypted)"
        }
    }
}
