import BluetoothCore

/// Find By Type Value Request (0x06, Core 5.4 Vol 3 Part F 3.4.3.3): the handles of the
/// attributes with a 16-bit type and an exact value (GATT uses it to discover a primary
/// service by UUID).
public struct FindByTypeValueRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.findByTypeValueRequest

    public var startingHandle: UInt16
    public var endingHandle: UInt16
    /// Always a 16-bit UUID in this PDU.
    public var attributeType: UInt16
    public var attributeValue: [UInt8]

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: UInt16, attributeValue: [UInt8]) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
        self.attributeValue = attributeValue
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeType = try reader.readUInt16()
        attributeValue = reader.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
        writer.write(attributeType)
        writer.write(contentsOf: attributeValue)
    }
}

/// Find By Type Value Response (0x07, 3.4.3.4): a list of handle ranges, at least one.
public struct FindByTypeValueResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.findByTypeValueResponse

    /// One match: the attribute found and the end of its group (for a service, its last
    /// handle; for an attribute that is no group, its own handle).
    public struct HandlesInformation: Sendable, Hashable {
        public var foundAttributeHandle: UInt16
        public var groupEndHandle: UInt16

        public init(foundAttributeHandle: UInt16, groupEndHandle: UInt16) {
            self.foundAttributeHandle = foundAttributeHandle
            self.groupEndHandle = groupEndHandle
        }
    }

    public let handlesInformationList: [HandlesInformation]

    /// Throws when the list is empty: the wire form cannot carry an empty list.
    public init(handlesInformationList: [HandlesInformation]) throws(DecodeError) {
        guard !handlesInformationList.isEmpty else { throw .invalidValue(field: "Handles Information element count", value: 0) }
        self.handlesInformationList = handlesInformationList
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        handlesInformationList = try reader.readList(elementSize: 4, field: "Handles Information") {
            (element: inout ByteReader) throws(DecodeError) in
            HandlesInformation(foundAttributeHandle: try element.readUInt16(), groupEndHandle: try element.readUInt16())
        }
    }

    public func encode(into writer: inout ByteWriter) {
        for entry in handlesInformationList {
            writer.write(entry.foundAttributeHandle)
            writer.write(entry.groupEndHandle)
        }
    }
}
