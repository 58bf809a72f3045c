import BluetoothCore

/// Prepare Write Request (0x16, Core 5.4 Vol 3 Part F 3.4.6.1): queue part of a value on
/// the server, to be written by Execute Write (long and reliable writes).
public struct PrepareWriteRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.prepareWriteRequest

    public var attributeHandle: UInt16
    public var valueOffset: UInt16
    public var partAttributeValue: [UInt8]

    public init(attributeHandle: UInt16, valueOffset: UInt16, partAttributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.valueOffset = valueOffset
        self.partAttributeValue = partAttributeValue
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        attributeHandle = try reader.readUInt16()
        valueOffset = try reader.readUInt16()
        partAttributeValue = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(attributeHandle)
        writer.write(valueOffset)
        writer.write(contentsOf: partAttributeValue)
    }
}

/// Prepare Write Response (0x17, 3.4.6.2): the server echoes what it queued, so a reliable
/// write can compare it with what was sent.
public struct PrepareWriteResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.prepareWriteResponse

    public var attributeHandle: UInt16
    public var valueOffset: UInt16
    public var partAttributeValue: [UInt8]

    public init(attributeHandle: UInt16, valueOffset: UInt16, partAttributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.valueOffset = valueOffset
        self.partAttributeValue = partAttributeValue
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        attributeHandle = try reader.readUInt16()
        valueOffset = try reader.readUInt16()
        partAttributeValue = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(attributeHandle)
        writer.write(valueOffset)
        writer.write(contentsOf: partAttributeValue)
    }
}

/// Execute Write Request (0x18, 3.4.6.3): write or discard everything prepared.
public struct ExecuteWriteRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.executeWriteRequest

    /// The Flags byte. Open, so a reserved value still decodes and the server can answer it
    /// with Invalid PDU instead of dropping the request.
    public struct Flags: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Cancel all prepared writes.
        public static let cancelAllPreparedWrites = Flags(rawValue: 0x00)
        /// Immediately write all pending prepared values.
        public static let immediatelyWriteAllPendingPreparedValues = Flags(rawValue: 0x01)
    }

    public var flags: Flags

    public init(flags: Flags) { self.flags = flags }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        flags = Flags(rawValue: try reader.readUInt8())
    }

    public func encode(into writer: inout ByteWriter) { writer.write(flags.rawValue) }
}

/// Execute Write Response (0x19, 3.4.6.4): no parameters.
public struct ExecuteWriteResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.executeWriteResponse
    public init() {}
    public init(decoding reader: inout ByteReader) throws(DecodeError) {}
    public func encode(into writer: inout ByteWriter) {}
}
