import BluetoothCore

/// Read By Group Type Request (0x10, Core 5.4 Vol 3 Part F 3.4.4.9): the grouping
/// attributes of one type in a handle range (GATT's primary service discovery, type 0x2800).
public struct ReadByGroupTypeRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readByGroupTypeRequest

    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public let attributeGroupType: BluetoothUUID
    /// The width the type travels with: the shortest for built values, as received for
    /// decoded ones.
    public let attributeGroupTypeWidth: ATTUUIDWidth

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeGroupType = attributeGroupType
        self.attributeGroupTypeWidth = ATTUUIDWidth(shortestFor: attributeGroupType)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeGroupTypeWidth = try .of(remaining: reader.remaining, field: "Attribute Group Type")
        attributeGroupType = try reader.readUUID(attributeGroupTypeWidth)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
        writer.write(attributeGroupType, width: attributeGroupTypeWidth)
    }
}

/// Read By Group Type Response (0x11, 3.4.4.10): a Length byte, then (handle, end group
/// handle, value) entries of exactly that length each; at least one.
public struct ReadByGroupTypeResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.readByGroupTypeResponse

    /// One group: its grouping attribute, the group's last handle, and the grouping
    /// attribute's value (for a service, its UUID).
    public struct AttributeData: Sendable, Hashable {
        public var attributeHandle: UInt16
        public var endGroupHandle: UInt16
        public var attributeValue: [UInt8]

        public init(attributeHandle: UInt16, endGroupHandle: UInt16, attributeValue: [UInt8]) {
            self.attributeHandle = attributeHandle
            self.endGroupHandle = endGroupHandle
            self.attributeValue = attributeValue
        }
    }

    public let attributeDataList: [AttributeData]

    /// The Length field: the size of each entry.
    public var length: UInt8 { UInt8(truncatingIfNeeded: 4 + (attributeDataList.first?.attributeValue.count ?? 0)) }

    /// Throws when the list is empty, values differ in length, or an entry exceeds the 255
    /// bytes the Length field can state.
    public init(attributeDataList: [AttributeData]) throws(DecodeError) {
        guard let first = attributeDataList.first else { throw .invalidValue(field: "Attribute Data element count", value: 0) }
        let valueLength = first.attributeValue.count
        guard valueLength <= 251 else { throw .invalidValue(field: "Attribute Data length", value: 4 + valueLength) }
        if let other = attributeDataList.first(where: { $0.attributeValue.count != valueLength }) {
            throw .lengthMismatch(declared: valueLength, actual: other.attributeValue.count)
        }
        self.attributeDataList = attributeDataList
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        let length = Int(try reader.readUInt8())
        // An entry holds at least its two handles.
        guard length >= 4 else { throw .invalidValue(field: "Read By Group Type Response Length", value: length) }
        attributeDataList = try reader.readList(elementSize: length, field: "Attribute Data") {
            (element: inout ByteReader) throws(DecodeError) in
            AttributeData(
                attributeHandle: try element.readUInt16(),
                endGroupHandle: try element.readUInt16(),
                attributeValue: element.readRemaining()
            )
        }
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(length)
        for entry in attributeDataList {
            writer.write(entry.attributeHandle)
            writer.write(entry.endGroupHandle)
            writer.write(contentsOf: entry.attributeValue)
        }
    }
}
