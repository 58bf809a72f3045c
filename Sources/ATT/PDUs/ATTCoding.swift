import BluetoothCore

/// How wide a UUID travels in an ATT PDU. ATT carries only the 16- and 128-bit forms
/// (Core 5.4 Vol 3 Part F 3.2.1): a 32-bit UUID goes as 128 bits.
///
/// PDUs that carry a UUID keep the width they were decoded with, because
/// ``BluetoothUUID`` compares full values: a 16-byte UUID inside the Base UUID range equals
/// its 16-bit alias, and re-encoding it short would change the bytes.
public enum ATTUUIDWidth: Sendable, Hashable {
    case bits16
    case bits128

    /// The shortest form ATT allows for `uuid`.
    public init(shortestFor uuid: BluetoothUUID) {
        self = uuid.byteWidth == 2 ? .bits16 : .bits128
    }

    public var byteCount: Int { self == .bits16 ? 2 : 16 }

    /// The width of a UUID field that is the rest of a PDU, from its length.
    static func of(remaining count: Int, field: String) throws(DecodeError) -> ATTUUIDWidth {
        switch count {
        case 2: .bits16
        case 16: .bits128
        default: throw .invalidValue(field: "\(field) length", value: count)
        }
    }
}

extension ByteReader {
    mutating func readUUID(_ width: ATTUUIDWidth) throws(DecodeError) -> BluetoothUUID {
        try BluetoothUUID(littleEndian: readBytes(width.byteCount))
    }

    /// The rest of the parameters as a list of `elementSize`-byte elements: at least one,
    /// and nothing left over. `elementSize` may come from the peer, so zero is rejected
    /// before it is divided by.
    mutating func readList<Element>(
        elementSize: Int,
        field: String,
        _ element: (inout ByteReader) throws(DecodeError) -> Element
    ) throws(DecodeError) -> [Element] {
        guard elementSize > 0 else { throw .invalidValue(field: "\(field) element length", value: elementSize) }
        guard remaining > 0 else { throw .invalidValue(field: "\(field) element count", value: 0) }
        guard remaining % elementSize == 0 else { throw .trailingBytes(count: remaining % elementSize) }
        var elements: [Element] = []
        elements.reserveCapacity(remaining / elementSize)  // bounded by bytes actually present
        while !isAtEnd {
            var sub = try subReader(elementSize)
            elements.append(try element(&sub))
            try sub.expectEnd()
        }
        return elements
    }

    /// The rest of the parameters as a Set Of Handles: at least one, an even length.
    mutating func readHandles(field: String) throws(DecodeError) -> [UInt16] {
        try readList(elementSize: 2, field: field) { (reader: inout ByteReader) throws(DecodeError) in
            try reader.readUInt16()
        }
    }
}

extension ByteWriter {
    mutating func write(_ uuid: BluetoothUUID, width: ATTUUIDWidth) {
        switch width {
        case .bits16: write(UInt16(truncatingIfNeeded: uuid.shortValue ?? 0))
        case .bits128: write(contentsOf: uuid.littleEndianBytes128)
        }
    }
}
