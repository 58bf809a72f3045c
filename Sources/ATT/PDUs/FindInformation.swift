import BluetoothCore

/// Find Information Request (0x04, Core 5.4 Vol 3 Part F 3.4.3.1): the types of the
/// attributes in a handle range.
///
/// The handles are kept as sent: a range that starts at 0x0000 or runs backwards decodes,
/// because the server must answer it with Invalid Handle rather than drop it.
public struct FindInformationRequest: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.findInformationRequest

    public var startingHandle: UInt16
    public var endingHandle: UInt16

    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(startingHandle)
        writer.write(endingHandle)
    }
}

/// Find Information Response (0x05, 3.4.3.2): handle and type pairs, all 16-bit UUIDs
/// (format 0x01) or all 128-bit (format 0x02); at least one.
public struct FindInformationResponse: ATTPDUParameters, Hashable {
    public static let opcode = ATTOpcode.findInformationResponse

    /// One attribute: its handle and its type.
    public struct InformationData: Sendable, Hashable {
        public var handle: UInt16
        public var type: BluetoothUUID

        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    /// The Format byte: 0x01 for 16-bit UUIDs, 0x02 for 128-bit.
    public static let format16BitUUIDs: UInt8 = 0x01
    public static let format128BitUUIDs: UInt8 = 0x02

    /// The UUID width every entry is sent with (the Format field).
    public let format: ATTUUIDWidth
    public let informationData: [InformationData]

    /// Builds a response in `format`; throws when the list is empty or a type does not fit
    /// a 16-bit format.
    public init(format: ATTUUIDWidth, informationData: [InformationData]) throws(DecodeError) {
        guard !informationData.isEmpty else { throw .invalidValue(field: "Information Data element count", value: 0) }
        if format == .bits16, let wide = informationData.first(where: { $0.type.byteWidth != 2 }) {
            throw .invalidValue(field: "16-bit Information Data UUID width", value: wide.type.byteWidth)
        }
        self.format = format
        self.informationData = informationData
    }

    /// Builds a response in the shortest format that holds every type.
    public init(informationData: [InformationData]) throws(DecodeError) {
        let allShort = informationData.allSatisfy { $0.type.byteWidth == 2 }
        try self.init(format: allShort ? .bits16 : .bits128, informationData: informationData)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        let formatByte = try reader.readUInt8()
        switch formatByte {
        case Self.format16BitUUIDs: format = .bits16
        case Self.format128BitUUIDs: format = .bits128
        default: throw .invalidValue(field: "Find Information Response Format", value: Int(formatByte))
        }
        let width = format
        informationData = try reader.readList(elementSize: 2 + width.byteCount, field: "Information Data") {
            (element: inout ByteReader) throws(DecodeError) in
            InformationData(handle: try element.readUInt16(), type: try element.readUUID(width))
        }
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(format == .bits16 ? Self.format16BitUUIDs : Self.format128BitUUIDs)
        for entry in informationData {
            writer.write(entry.handle)
            writer.write(entry.type, width: format)
        }
    }
}
