import BluetoothCore

// Read Multiple and Read Multiple Variable (Core 5.4 Vol 3 Part F 3.4.4.7-8, 3.4.4.11-12).
// The specification asks for two or more handles; a set of one is accepted because it is
// unambiguous and harmless, while zero handles or an odd byte are rejected.

/// Read Multiple Request (0x0E): the values of several attributes of known length.
public struct ReadMultipleRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readMultipleRequest

    public let setOfHandles: [UInt16]

    /// Throws when the set is empty.
    public init(setOfHandles: [UInt16]) throws(DecodeError) {
        guard !setOfHandles.isEmpty else { throw .invalidValue(field: "Set Of Handles count", value: 0) }
        self.setOfHandles = setOfHandles
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        setOfHandles = try reader.readHandles(field: "Set Of Handles")
    }

    public func encode(into writer: inout ByteWriter) {
        for handle in setOfHandles { writer.write(handle) }
    }
}

/// Read Multiple Response (0x0F): the values concatenated, with no lengths; only the
/// client, which knows each value's length, can split them.
public struct ReadMultipleResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readMultipleResponse

    public var setOfValues: [UInt8]

    public init(setOfValues: [UInt8]) { self.setOfValues = setOfValues }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        setOfValues = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: setOfValues) }
}

/// Read Multiple Variable Request (0x20): the values of several attributes, each returned
/// with its length.
public struct ReadMultipleVariableRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readMultipleVariableRequest

    public let setOfHandles: [UInt16]

    /// Throws when the set is empty.
    public init(setOfHandles: [UInt16]) throws(DecodeError) {
        guard !setOfHandles.isEmpty else { throw .invalidValue(field: "Set Of Handles count", value: 0) }
        self.setOfHandles = setOfHandles
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        setOfHandles = try reader.readHandles(field: "Set Of Handles")
    }

    public func encode(into writer: inout ByteWriter) {
        for handle in setOfHandles { writer.write(handle) }
    }
}

/// Read Multiple Variable Response (0x21): (Value Length, Attribute Value) tuples.
///
/// When the tuples do not fit ATT_MTU - 1 bytes the server sends only the first
/// ATT_MTU - 1 bytes, so the last value may be shorter than its Value Length; that tuple
/// keeps both, and ``LengthValue/isTruncated`` says so. A cut inside a Value Length field
/// leaves a single byte that no tuple can hold; it is rejected.
public struct ReadMultipleVariableResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readMultipleVariableResponse

    public struct LengthValue: Sendable, Hashable {
        /// The value's full length on the server.
        public let valueLength: UInt16
        /// The bytes that arrived: all of them, or fewer in a truncated last tuple.
        public let attributeValue: [UInt8]

        /// A complete tuple. Throws when the value is longer than a Value Length can state.
        public init(attributeValue: [UInt8]) throws(DecodeError) {
            guard attributeValue.count <= Int(UInt16.max) else {
                throw .invalidValue(field: "Value Length", value: attributeValue.count)
            }
            self.valueLength = UInt16(attributeValue.count)
            self.attributeValue = attributeValue
        }

        /// A tuple whose value may be cut short. Throws when more bytes than `valueLength`
        /// are given.
        public init(valueLength: UInt16, attributeValue: [UInt8]) throws(DecodeError) {
            guard attributeValue.count <= Int(valueLength) else {
                throw .lengthMismatch(declared: Int(valueLength), actual: attributeValue.count)
            }
            self.valueLength = valueLength
            self.attributeValue = attributeValue
        }

        public var isTruncated: Bool { attributeValue.count < Int(valueLength) }
    }

    public let lengthValueTupleList: [LengthValue]

    /// Throws when the list is empty or a tuple other than the last is truncated.
    public init(lengthValueTupleList: [LengthValue]) throws(DecodeError) {
        guard !lengthValueTupleList.isEmpty else { throw .invalidValue(field: "Length Value Tuple count", value: 0) }
        if let cut = lengthValueTupleList.dropLast().first(where: \.isTruncated) {
            throw .lengthMismatch(declared: Int(cut.valueLength), actual: cut.attributeValue.count)
        }
        self.lengthValueTupleList = lengthValueTupleList
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        guard !reader.isAtEnd else { throw .invalidValue(field: "Length Value Tuple count", value: 0) }
        var tuples: [LengthValue] = []
        while !reader.isAtEnd {
            let valueLength = try reader.readUInt16()
            // Take what is there, never more: the length field is the peer's claim.
            let value = try reader.readBytes(min(Int(valueLength), reader.remaining))
            tuples.append(try LengthValue(valueLength: valueLength, attributeValue: value))
        }
        lengthValueTupleList = tuples
    }

    public func encode(into writer: inout ByteWriter) {
        for tuple in lengthValueTupleList {
            writer.write(tuple.valueLength)
            writer.write(contentsOf: tuple.attributeValue)
        }
    }
}
