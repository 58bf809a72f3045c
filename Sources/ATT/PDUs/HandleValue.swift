import BluetoothCore

/// Handle Value Notification (0x1B, Core 5.4 Vol 3 Part F 3.4.7.1): a server-initiated
/// value, not confirmed.
public struct HandleValueNotification: AttributeHandleValueParameters, Hashable {
    public static let opcode = ATTOpcode.handleValueNotification

    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Handle Value Indication (0x1D, 3.4.7.2): a server-initiated value the client must
/// confirm; the server sends no other indication until it is confirmed.
public struct HandleValueIndication: AttributeHandleValueParameters, Hashable {
    public static let opcode = ATTOpcode.handleValueIndication

    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Handle Value Confirmation (0x1E, 3.4.7.3): no parameters.
public struct HandleValueConfirmation: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.handleValueConfirmation
    public init() {}
    public init(decoding reader: inout ByteReader) throws(DecodeError) {}
    public func encode(into writer: inout ByteWriter) {}
}

/// Multiple Handle Value Notification (0x23, 3.4.7.4): several values in one PDU, each as
/// (handle, length, value).
///
/// The specification asks for two or more tuples; one is accepted, because it is
/// unambiguous and dropping a peer's value over it would help no one. Unlike Read
/// Multiple Variable Response this PDU is never truncated, so every length must be met.
public struct MultipleHandleValueNotification: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.multipleHandleValueNotification

    public struct HandleLengthValue: Sendable, Hashable {
        public var attributeHandle: UInt16
        public var attributeValue: [UInt8]

        public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
            self.attributeHandle = attributeHandle
            self.attributeValue = attributeValue
        }
    }

    public let handleLengthValueTupleList: [HandleLengthValue]

    /// Throws when the list is empty or a value is longer than a Length field can state.
    public init(handleLengthValueTupleList: [HandleLengthValue]) throws(DecodeError) {
        guard !handleLengthValueTupleList.isEmpty else {
            throw .invalidValue(field: "Handle Length Value Tuple count", value: 0)
        }
        if let long = handleLengthValueTupleList.first(where: { $0.attributeValue.count > Int(UInt16.max) }) {
            throw .invalidValue(field: "Length", value: long.attributeValue.count)
        }
        self.handleLengthValueTupleList = handleLengthValueTupleList
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        guard !reader.isAtEnd else { throw .invalidValue(field: "Handle Length Value Tuple count", value: 0) }
        var tuples: [HandleLengthValue] = []
        while !reader.isAtEnd {
            let handle = try reader.readUInt16()
            let length = Int(try reader.readUInt16())
            guard length <= reader.remaining else { throw .lengthMismatch(declared: length, actual: reader.remaining) }
            tuples.append(HandleLengthValue(attributeHandle: handle, attributeValue: try reader.readBytes(length)))
        }
        handleLengthValueTupleList = tuples
    }

    public func encode(into writer: inout ByteWriter) {
        for tuple in handleLengthValueTupleList {
            writer.write(tuple.attributeHandle)
            writer.write(UInt16(truncatingIfNeeded: tuple.attributeValue.count))
            writer.write(contentsOf: tuple.attributeValue)
        }
    }
}
