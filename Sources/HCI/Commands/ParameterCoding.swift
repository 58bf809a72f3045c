import BluetoothCore

// Reading helpers shared by the command declarations. Every command decoder must be
// canonical: a value it accepts re-encodes to exactly the bytes it came from. So a field
// whose Swift type cannot hold every byte value (a Bool, a closed enum, a fixed-size key)
// rejects the values it cannot represent instead of silently normalising them.

extension ByteReader {
    /// A one-octet enable/disable parameter: 0x00 or 0x01. Anything else is reserved by the
    /// specification and a controller answers it with Invalid HCI Command Parameters.
    mutating func readBooleanParameter(_ field: String) throws(DecodeError) -> Bool {
        let value = try readUInt8()
        guard value <= 1 else { throw .invalidValue(field: field, value: Int(value)) }
        return value == 1
    }

    /// An Own_Address_Type / Peer_Address_Type octet (0x00...0x03).
    mutating func readAddressTypeParameter(_ field: String) throws(DecodeError) -> AddressType {
        let value = try readUInt8()
        guard let type = AddressType(rawValue: value) else {
            throw .invalidValue(field: field, value: Int(value))
        }
        return type
    }

    /// A fixed-size byte string (keys, IRKs, encrypted blocks).
    mutating func readFixedParameter(count: Int) throws(DecodeError) -> [UInt8] {
        try readBytes(count)
    }

    /// Signed one-octet power levels and RSSI values, in dBm.
    mutating func readPowerParameter() throws(DecodeError) -> Int8 {
        try readInt8()
    }
}

/// Checks that a fixed-size parameter has exactly `count` octets; used by the throwing
/// initializers so an invalid command cannot be built in the first place.
func checkParameterLength(_ bytes: [UInt8], is count: Int) throws(DecodeError) {
    guard bytes.count == count else { throw .lengthMismatch(declared: count, actual: bytes.count) }
}

/// Checks a variable-length parameter against the most its length octet allows.
func checkParameterLength(_ bytes: [UInt8], atMost limit: Int, field: String) throws(DecodeError) {
    guard bytes.count <= limit else { throw .invalidValue(field: field, value: bytes.count) }
}

// Per-PHY arrays (LE Set Extended Scan Parameters, LE Extended Create Connection): one
// entry per bit set in a PHY mask (Scanning_PHYs, Initiating_PHYs), lowest bit first. A
// reserved bit still counts, so a command from a newer host decodes faithfully.

/// The number of per-PHY entries a PHY bitmask announces.
func phyEntryCount(_ mask: LEPHYMask) -> Int { mask.rawValue.nonzeroBitCount }

/// Checks that per-PHY arrays have one entry per bit set in the PHY mask.
func checkPHYEntries(_ count: Int, mask: LEPHYMask) throws(DecodeError) {
    guard count == phyEntryCount(mask) else {
        throw .lengthMismatch(declared: phyEntryCount(mask), actual: count)
    }
}

/// The mask and entries for the PHYs that have an entry, so they cannot disagree.
func phyEntries<Entry>(_ candidates: [(phy: LEPHYMask, entry: Entry?)]) -> (mask: LEPHYMask, entries: [Entry]) {
    var mask: LEPHYMask = []
    var entries: [Entry] = []
    for case let (phy, entry?) in candidates {
        mask.insert(phy)
        entries.append(entry)
    }
    return (mask, entries)
}

extension ByteReader {
    /// The entries `mask` announces; at most eight, so nothing large is allocated.
    mutating func readPHYEntries<Entry>(
        _ mask: LEPHYMask,
        _ readEntry: (inout ByteReader) throws(DecodeError) -> Entry
    ) throws(DecodeError) -> [Entry] {
        var entries: [Entry] = []
        for _ in 0..<phyEntryCount(mask) { entries.append(try readEntry(&self)) }
        return entries
    }
}

extension ByteWriter {
    mutating func writeAddressTypeParameter(_ type: AddressType) { write(type.rawValue) }
}

/// Two-digit hexadecimal for descriptions of reserved values.
func reservedValueHex(_ value: UInt8) -> String { "0x" + Hex.string([value]) }
