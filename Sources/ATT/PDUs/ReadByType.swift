import BluetoothCore

/// Read By Type Request (0x08, Core 5.4 Vol 3 Part F 3.4.4.1): the values of the attributes
/// of one type in a handle range. The type is a 16- or 128-bit UUID.
public struct ReadByTypeRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readByTypeRequest

    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public let attributeType: BluetoothUUID
    /// The width the type travels with: the shortest for built values, as received for
    /// decoded ones.
    public let attributeTypeWidth: ATTUUIDWidth

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
        self.attributeTypeWidth = ATTUUIDWidth(shortestFor: attributeType)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeTypeWidth = try .of(remaining: reader.remaining, field: "Read By Type Request Attribute Type")
        attributeType = try reader.readUUID(attributeTypeWidth)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
        writer.write(attributeType, width: attributeTypeWidth)
    }
}

/// Read By Type Response (0x09, 3.4.4.2): a Length byte, then handle-value pairs of exactly
/// that length each; at least one.
///
/// Every value in one response has the same length (the server stops at the first value of
/// another length), so a list of differing lengths cannot be built.
public struct ReadByTypeResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readByTypeResponse

    /// One attribute's handle and (possibly truncated) value.
    public struct AttributeData: Sendable, Hashable {
        public var attributeHandle: UInt16
        public var attributeValue: [UInt8]

        public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
            self.attributeHandle = attributeHandle
            self.attributeValue = attributeValue
        }
    }

    public let attributeDataList: [AttributeData]

    /// The Length field: the size of each handle-value pair.
    public var length: UInt8 { UInt8(truncatingIfNeeded: 2 + (attributeDataList.first?.attributeValue.count ?? 0)) }

    /// Throws when the list is empty, values differ in length, or a pair exceeds the 255
    /// bytes the Length field can state.
    public init(attributeDataList: [AttributeData]) throws(DecodeError) {
        guard let first = attributeDataList.first else { throw .invalidValue(field: "Attribute Data element count", value: 0) }
        let valueLength = first.attributeValue.count
        guard valueLength <= 253 else { throw .invalidValue(field: "Attribute Data length", value: 2 + valueLength) }
        if let other = attributeDataList.first(where: { $0.attributeValue.count != valueLength }) {
            throw .lengthMismatch(declared: valueLength, actual: other.attributeValue.count)
        }
        self.attributeDataList = attributeDataList
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        let length = Int(try reader.readUInt8())
        // A pair holds at least its handle.
        guard length >= 2 else { throw .invalidValue(field: "Read By Type Response Length", value: length) }
        attributeDataList = try reader.readList(elementSize: length, field: "Attribute Data") {
            (element: inout ByteReader) throws(DecodeError) in
            AttributeData(attributeHandle: try element.readUInt16(), attributeValue: element.readRemaining())
        }
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(length)
        for entry in attributeDataList {
            writer.write(entry.attributeHandle)
            writer.write(contentsOf: entry.attributeValue)
        }
    }
}
