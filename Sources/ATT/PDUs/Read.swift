import BluetoothCore

/// Read Request (0x0A, Core 5.4 Vol 3 Part F 3.4.4.3).
public struct ReadRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readRequest

    public var attributeHandle: UInt16

    public init(attributeHandle: UInt16) { self.attributeHandle = attributeHandle }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        attributeHandle = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) { writer.write(attributeHandle) }
}

/// Read Response (0x0B, 3.4.4.4): the value, cut to ATT_MTU - 1 bytes by the server when
/// longer (the rest is read with Read Blob).
public struct ReadResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readResponse

    public var attributeValue: [UInt8]

    public init(attributeValue: [UInt8]) { self.attributeValue = attributeValue }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        attributeValue = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: attributeValue) }
}

/// Read Blob Request (0x0C, 3.4.4.5): part of a long value, from an offset.
public struct ReadBlobRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readBlobRequest

    public var attributeHandle: UInt16
    public var valueOffset: UInt16

    public init(attributeHandle: UInt16, valueOffset: UInt16) {
        self.attributeHandle = attributeHandle
        self.valueOffset = valueOffset
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        attributeHandle = try reader.readUInt16()
        valueOffset = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(attributeHandle)
        writer.write(valueOffset)
    }
}

/// Read Blob Response (0x0D, 3.4.4.6).
public struct ReadBlobResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readBlobResponse

    public var partAttributeValue: [UInt8]

    public init(partAttributeValue: [UInt8]) { self.partAttributeValue = partAttributeValue }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        partAttributeValue = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: partAttributeValue) }
}
