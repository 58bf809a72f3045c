import BluetoothCore

/// PDUs whose parameters are an attribute handle and then the attribute value, to the end
/// of the PDU: Write Request, Write Command, Handle Value Notification and Indication
/// (Core 5.4 Vol 3 Part F 3.4.5, 3.4.7). Each keeps its own type and opcode; the coding is
/// written once here.
public protocol AttributeHandleValueParameters: ATTPDUParameters {
    var attributeHandle: UInt16 { get }
    var attributeValue: [UInt8] { get }
    init(attributeHandle: UInt16, attributeValue: [UInt8])
}

extension AttributeHandleValueParameters {
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        let handle = try reader.readUInt16()
        self.init(attributeHandle: handle, attributeValue: reader.readRemaining())
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(attributeHandle)
        writer.write(contentsOf: attributeValue)
    }
}
